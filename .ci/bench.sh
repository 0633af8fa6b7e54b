#!/usr/bin/env bash
# make bench: speed and memory on a large history cloned from the public
# corpus with ocgen (not part of CI). Prints medians over repeated runs.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${SHARED:-../shared}
COPIES=${BENCH_COPIES:-7000}          # ~200k parts from the 37-session public corpus
WORK=${BENCH_DIR:-/tmp/recall-bench}
COUNT=${BENCH_COUNT:-5}
mkdir -p "$WORK"
DB="$WORK/clone-$COPIES/opencode.db"

if [ ! -f "$DB" ]; then
  echo "== building ocgen and cloning $COPIES sessions (ocgen clone -mode sql)"
  (cd "$SHARED/ocgen" && go build -o "$WORK/ocgen" .)
  rm -rf "$WORK/clone-$COPIES"
  "$WORK/ocgen" clone -mode sql -from "$SHARED/corpus/public" -out "$WORK/clone-$COPIES" -n "$COPIES"
fi
make -s build
IDX="$WORK/index-$COPIES.db"
rm -f "$IDX" "$IDX-wal" "$IDX-shm"

rss() { # peak RSS (MB) of a command, via getrusage of the child
  python3 - "$@" <<'PY'
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1))
PY
}
echo "== corpus: $(sqlite3 "$DB" 'select count(*) from session') sessions, $(sqlite3 "$DB" 'select count(*) from part') parts, $(du -h "$DB" | cut -f1)"
echo "== cold index through the CLI (recall sync)"
start=$(date +%s.%N)
COLD_RSS=$(rss bin/recall sync --db "$DB" --index "$IDX" --quiet)
COLD_S=$(echo "$(date +%s.%N) - $start" | bc)
SEARCH_RSS=$(rss bin/recall search --db "$DB" --index "$IDX" --quiet --json "webhook retry storm")

echo "== engine benchmarks (-count $COUNT)"
export RECALL_BENCH_DB="$DB" RECALL_BENCH_INDEX="$IDX" RECALL_BENCH_QUERIES="$SHARED/corpus/public-queries.json"
go test -run '^$' -bench 'Search|IdleSync|ReadWindow|Sessions20' -benchtime 200x -count "$COUNT" ./engine/ | tee "$WORK/bench.txt"
go test -run '^$' -bench 'ColdIndex' -benchtime 1x -count 3 ./engine/ | tee -a "$WORK/bench.txt"

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
metric() { grep "^Benchmark$1" "$WORK/bench.txt" | grep -o "[0-9.]* $2" | cut -d' ' -f1 | median; }
echo
echo "| measure | median | target |"
echo "| --- | --- | --- |"
echo "| search p50 | $(metric Search p50-ms) ms | |"
echo "| search p95 | $(metric Search p95-ms) ms | <= 40 ms |"
echo "| idle sync p50 | $(metric IdleSync p50-ms) ms | <= 10 ms |"
echo "| read window p95 | $(metric ReadWindow p95-ms) ms | <= 10 ms |"
echo "| sessions --limit 20 p50 | $(metric Sessions20 p50-ms) ms | <= 5 ms |"
echo "| cold index | $(metric ColdIndex parts/s) parts/s | >= 5,000 |"
echo "| peak RSS, cold index (CLI) | $COLD_RSS MB | <= 150 MB |"
echo "| peak RSS, search (CLI) | $SEARCH_RSS MB | <= 150 MB |"
echo "| cold index wall time (CLI) | ${COLD_S}s | |"
