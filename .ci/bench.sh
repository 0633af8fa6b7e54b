#!/usr/bin/env bash
# make bench: speed and memory on a large history cloned from the public
# corpus (testdata/corpus) with tools/ocgen (not part of CI). Prints medians
# over repeated runs.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
# make bench SCALE=1 (or SCALE=big): the growth table over several history
# sizes instead (.ci/bench-scale.py).
if [ -n "${SCALE:-}" ]; then
  exec python3 .ci/bench-scale.py
fi
CORPUS=$REPO/testdata/corpus
COPIES=${BENCH_COPIES:-7000}          # ~200k parts from the 37-session public corpus
WORK=${BENCH_DIR:-/tmp/recall-bench}
COUNT=${BENCH_COUNT:-5}
mkdir -p "$WORK"
DB="$WORK/clone-$COPIES/opencode.db"

if [ ! -f "$DB" ]; then
  echo "== building ocgen and cloning $COPIES sessions (ocgen clone -mode sql)"
  go build -o "$WORK/ocgen" ./tools/ocgen
  rm -rf "$WORK/clone-$COPIES"
  "$WORK/ocgen" clone -mode sql -from "$CORPUS/public" -out "$WORK/clone-$COPIES" -n "$COPIES"
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
export RECALL_BENCH_DB="$DB" RECALL_BENCH_INDEX="$IDX" RECALL_BENCH_QUERIES="$CORPUS/public-queries.json"
go test -run '^$' -bench '^Benchmark(Search|IdleSync|ReadWindow|Sessions20)$' -benchtime 200x -count "$COUNT" ./engine/ | tee "$WORK/bench.txt"
go test -run '^$' -bench 'ColdIndex' -benchtime 1x -count 3 ./engine/ | tee -a "$WORK/bench.txt"
# Redaction over real history text (the public corpus and the secrets fixtures).
go test -run '^$' -bench '^BenchmarkRedact$' -benchtime 5x -count "$COUNT" ./engine/redact/ | tee -a "$WORK/bench.txt"

echo "== semantic: a random all-MiniLM-L6-v2-shaped model (bertgen), installed with recall models import"
XDG_BENCH="$WORK/xdg"
if [ ! -d "$XDG_BENCH/recall/models" ]; then
  go run ./engine/embed/bertgen/cmd/bertgen -size minilm -out "$WORK/minilm-random"
  XDG_DATA_HOME="$XDG_BENCH" bin/recall models import "$WORK/minilm-random" --name bench/minilm-random
fi
export RECALL_BENCH_MODELS="$XDG_BENCH/recall/models"
go test -run '^$' -bench 'VectorSearch200k|QueryEmbed|HybridSearch' -benchtime 100x -count "$COUNT" ./engine/ | tee -a "$WORK/bench.txt"
go test -run '^$' -bench 'EmbedQueue' -benchtime 1x -count 3 ./engine/ | tee -a "$WORK/bench.txt"
go test -run '^$' -bench 'Chunks' -count 3 ./engine/embed/ | tee -a "$WORK/bench.txt"
# The public corpus's history texts as the queue hands them to the model
# (batches of 32), on the MiniLM-shaped model with the real vocabulary.
go test -run '^$' -bench '^BenchmarkHistoryTexts$' -benchtime 1x -count "$COUNT" ./engine/embed/ | tee -a "$WORK/bench.txt"
# Hybrid through the CLI as a user runs it, on an embedded ~600-session
# history (the index above has no vectors: a hybrid search there would
# fall back to lexical).
[ -x "$WORK/ocgen" ] || go build -o "$WORK/ocgen" ./tools/ocgen
HYBRID_ROWS=$(python3 .ci/bench-hybrid.py "$REPO/bin/recall" "$WORK" "$XDG_BENCH")

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
echo "| redaction (gitleaks + own rules, real history text) | $(metric Redact MB/s) MB/s | |"
echo "| peak RSS, cold index (CLI) | $COLD_RSS MB | <= 150 MB |"
echo "| peak RSS, search (CLI) | $SEARCH_RSS MB | <= 150 MB |"
echo "| cold index wall time (CLI) | ${COLD_S}s | |"
echo "| vector search p95, 200k vectors | $(metric VectorSearch200k/all p95-ms) ms | |"
echo "| query embedding p50 (MiniLM size) | $(metric QueryEmbed p50-ms) ms | |"
echo "| hybrid search p50 | $(metric HybridSearch p50-ms) ms | |"
echo "| hybrid search p95 | $(metric HybridSearch p95-ms) ms | <= 80 ms |"
echo "| embedding queue | $(metric EmbedQueue docs/s) docs/s, $(metric EmbedQueue texts/s) texts/s | |"
echo "| embedding, real history texts (public corpus, batches of 32) | $(metric HistoryTexts texts/s) texts/s ($(metric HistoryTexts cpu-texts/s) per 2 CPU-seconds) | >= 100 texts/s |"
echo "| embed chunks, 64 tokens | $(grep '^BenchmarkChunks/ours/tokens=64' "$WORK/bench.txt" | grep -o '[0-9.]* chunks/s' | cut -d' ' -f1 | median) chunks/s | |"
echo "| embed chunks, 128 tokens | $(grep '^BenchmarkChunks/ours/tokens=128' "$WORK/bench.txt" | grep -o '[0-9.]* chunks/s' | cut -d' ' -f1 | median) chunks/s | |"
echo "| stock cybertron Encode, 64 tokens | $(grep '^BenchmarkChunks/cybertron/tokens=64' "$WORK/bench.txt" | grep -o '[0-9.]* chunks/s' | cut -d' ' -f1 | median) chunks/s | (ours: >= 5x) |"
echo "| stock cybertron Encode, 128 tokens | $(grep '^BenchmarkChunks/cybertron/tokens=128' "$WORK/bench.txt" | grep -o '[0-9.]* chunks/s' | cut -d' ' -f1 | median) chunks/s | |"
echo "$HYBRID_ROWS"
