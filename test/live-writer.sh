#!/usr/bin/env bash
# test/live-writer.sh: the real OpenCode writes new sessions (turns, edits, a
# rename, an archive, a deletion) into its live database while `recall lsp`
# keeps an index fresh in the background; afterwards that index must equal a
# fresh rebuild of the same history (engine/livewriter_test.go compares them).
#
# Needs go, npm (first run installs opencode-ai through ocgen's gen.sh), git,
# sqlite3; ripgrep comes from apt if missing (gen.sh). Exits non-zero on any
# failure; prints how long each phase took.
#
# Knobs: OCGEN_DIR (ocgen sources, default tools/ocgen of this repository;
# copied to a temp dir first), RECALL_BIN (a built recall; default: go build),
# LIVE_WORK (scratch dir, default a fresh mktemp -d), KEEP=1 (keep it).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
OCGEN_DIR=${OCGEN_DIR:-$REPO/tools/ocgen}
SCENARIO=$HERE/live-writer/scenario.json
ROOT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["root"])' "$SCENARIO" 2>/dev/null ||
  sed -n 's/.*"root": *"\([^"]*\)".*/\1/p' "$SCENARIO" | head -n1)
LIVE_DB=$ROOT/home/.local/share/opencode/opencode.db
WORK=${LIVE_WORK:-$(mktemp -d /tmp/recall-live.XXXXXX)}
mkdir -p "$WORK"
KEPT=$WORK/kept.db
LSP_LOG=$WORK/lsp.log
T0=$(date +%s)

phase_start=$T0
phase() { # phase NAME: prints the time since the previous phase
  local now; now=$(date +%s)
  echo "== live-writer: $1 ($(( now - phase_start ))s; total $(( now - T0 ))s)"
  phase_start=$now
}
fail() { echo "live-writer: FAIL: $*" >&2; exit 1; }

GEN_PID= LSP_PID=
cleanup() {
  [ -n "$GEN_PID" ] && kill "$GEN_PID" 2>/dev/null || true
  [ -n "$LSP_PID" ] && kill "$LSP_PID" 2>/dev/null || true
  exec 3>&- 2>/dev/null || true
  if [ -z "${KEEP:-}" ] && [ -z "${LIVE_WORK:-}" ]; then rm -rf "$WORK"; else echo "live-writer: kept $WORK"; fi
}
trap cleanup EXIT

# 0. prerequisites, all checked before anything runs -------------------------
# shellcheck source=prereqs.sh
. "$HERE/prereqs.sh"
need_node 20
need go "Go 1.26 (https://go.dev/dl/)"
need git "git (apt-get install git)"
need python3 "python3 (apt-get install python3)"
need_apt sqlite3 sqlite3
need_apt rg ripgrep
prereqs_check "live-writer"

# 1. recall and ocgen --------------------------------------------------------
if [ -z "${RECALL_BIN:-}" ]; then
  RECALL_BIN=$WORK/recall
  (cd "$REPO" && CGO_ENABLED=0 go build -o "$RECALL_BIN" .)
fi
[ -f "$OCGEN_DIR/gen.sh" ] || fail "ocgen not found at $OCGEN_DIR (set OCGEN_DIR to a copy of tools/ocgen)"
rm -rf "$WORK/ocgen"
# Built where it stands (inside the recall module, or a copy with its own
# go.mod), before the copy leaves the module behind.
(cd "$OCGEN_DIR" && go build -o "$WORK/ocgen.bin" .) || fail "building ocgen in $OCGEN_DIR failed"
export OCGEN_BIN=$WORK/ocgen.bin
# A copy, so a run never writes into the checkout. (An `a && b` list would
# hide a failed cp from set -e.)
cp -r "$OCGEN_DIR" "$WORK/ocgen" || fail "copying $OCGEN_DIR failed"
chmod -R u+w "$WORK/ocgen"
export HOME_RECALL=$WORK/recall-home
mkdir -p "$HOME_RECALL"
recall() { HOME=$HOME_RECALL XDG_DATA_HOME=$HOME_RECALL/data XDG_CONFIG_HOME=$HOME_RECALL/config "$RECALL_BIN" "$@"; }
phase "built recall and copied ocgen"

# 2. the writer: the real opencode, playing the scenario ---------------------
rm -rf "$ROOT"
# One project at a time: the scenario's quiet gaps stay quiet.
OCGEN_JOBS=1 "$WORK/ocgen/gen.sh" "$SCENARIO" "$WORK/out" >"$WORK/gen.log" 2>&1 &
GEN_PID=$!
# Wait for OpenCode to create and migrate its database.
for _ in $(seq 1 600); do
  if [ -f "$LIVE_DB" ] && sqlite3 "file:$LIVE_DB?mode=ro" 'select count(*) from session' >/dev/null 2>&1; then break; fi
  kill -0 "$GEN_PID" 2>/dev/null || { tail -n 30 "$WORK/gen.log" >&2; fail "gen.sh ended before opencode created $LIVE_DB"; }
  sleep 0.5
done
[ -f "$LIVE_DB" ] || fail "no live database at $LIVE_DB"
phase "opencode is up ($LIVE_DB)"

# 3. the reader: recall lsp, a minimal client on a FIFO ------------------------
mkfifo "$WORK/lsp.in"
HOME=$HOME_RECALL XDG_DATA_HOME=$HOME_RECALL/data XDG_CONFIG_HOME=$HOME_RECALL/config \
  "$RECALL_BIN" lsp --log-file "$LSP_LOG" <"$WORK/lsp.in" >"$WORK/lsp.out" 2>"$WORK/lsp.err" &
LSP_PID=$!
exec 3>"$WORK/lsp.in"
send() { printf 'Content-Length: %d\r\n\r\n%s' "${#1}" "$1" >&3; }
send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{},"initializationOptions":{"db":"'"$LIVE_DB"'","index":"'"$KEPT"'","watch":true}}}'
send '{"jsonrpc":"2.0","method":"initialized","params":{}}'
for _ in $(seq 1 100); do grep -q '"id":1' "$WORK/lsp.out" 2>/dev/null && break; sleep 0.2; done
grep -q '"capabilities"' "$WORK/lsp.out" || { cat "$WORK/lsp.out" "$WORK/lsp.err" >&2; fail "recall lsp did not initialize"; }
phase "recall lsp initialized (pid $LSP_PID)"

# Sample the kept index while opencode writes (sqlite3, read-only). The
# scenario's quiet gaps let the watcher index N3 before OpenCode deletes it
# and N2 before it is renamed: the index must drop and re-title them later.
samples=0 midrun=0 seen_deleted=0 seen_old_title=0
q() { sqlite3 "file:$KEPT?mode=ro" "$1" 2>/dev/null || true; }
while kill -0 "$GEN_PID" 2>/dev/null; do
  kill -0 "$LSP_PID" 2>/dev/null || { cat "$WORK/lsp.err" >&2; fail "recall lsp died while opencode was writing"; }
  n=$(q 'select count(*) from sessions')
  samples=$((samples + 1))
  [ "${n:-0}" -gt 0 ] && midrun=$((midrun + 1))
  [ "$(q "select count(*) from sessions where title = 'Throwaway experiment'")" = 1 ] && seen_deleted=1
  [ "$(q "select count(*) from sessions where title = 'Case-insensitive search'")" = 1 ] && seen_old_title=1
  echo "sample $samples: ${n:-?} sessions indexed" >>"$WORK/samples.log"
  sleep 0.5
done
wait "$GEN_PID" || { tail -n 40 "$WORK/gen.log" >&2; fail "gen.sh failed"; }
GEN_PID=
syncs_during=$(grep -c 'background sync.*idle=false' "$LSP_LOG" || true)
phase "opencode finished the scenario ($samples samples, $midrun with sessions indexed, $syncs_during background syncs)"
grep -E '"errors"|"unscripted"' "$WORK/out/manifest.json" | head -n 2 || true
[ "$syncs_during" -ge 1 ] || fail "recall lsp never synced while opencode was writing"
# A sync after OpenCode's writes reads what changed, not every table. The
# ones that may walk: the first, one after the history file was replaced
# (OpenCode creating its database), one that finds a session deleted (its
# events may have been the newest). Most read only the sessions written to,
# found from OpenCode's events without listing the others ("history
# changes"); the rest list every session and read the stamps of what
# changed ("history stamps", walked=false).
walks=$(grep -c 'history stamps.*walked=true' "$LSP_LOG" || true)
listed=$(grep -c 'history stamps.*walked=false' "$LSP_LOG" || true)
changes=$(grep -c 'history changes' "$LSP_LOG" || true)
may_walk=$((1 + $(grep -c 'background sync.*replaced=true' "$LSP_LOG" || true) + $(grep -c 'background sync.*deleted=[1-9]' "$LSP_LOG" || true)))
echo "live-writer: $changes syncs read only the sessions written to; $listed listed every session and read what changed; $walks walked every table (at most $may_walk may)"
[ "$changes" -ge 1 ] && [ "$walks" -le "$may_walk" ] || fail "syncs walked every table $walks times (at most $may_walk may) and read only the sessions written to $changes times"
echo "live-writer: mid-run the index held the session deleted later: $seen_deleted; the renamed one under its old title: $seen_old_title"
[ "$seen_deleted" = 1 ] || fail "the deleted session was never indexed mid-run, so its removal went untested (watcher starved?)"
[ "$seen_old_title" = 1 ] || fail "the renamed session was never indexed under its old title mid-run"

# 4. let the watcher catch up, then stop the server -----------------------------
for _ in $(seq 1 120); do
  stale=$(recall status --no-sync --json --quiet --db "$LIVE_DB" --index "$KEPT" 2>/dev/null |
    sed -n 's/.*"stale":\(true\|false\).*/\1/p' || true)
  [ "$stale" = false ] && break
  sleep 0.5
done
[ "$stale" = false ] || fail "the kept index never caught up with the live database"
send '{"jsonrpc":"2.0","id":2,"method":"shutdown","params":null}'
send '{"jsonrpc":"2.0","method":"exit","params":null}'
exec 3>&-
for _ in $(seq 1 100); do kill -0 "$LSP_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$LSP_PID" 2>/dev/null; then fail "recall lsp did not exit after shutdown/exit"; fi
wait "$LSP_PID" || true
LSP_PID=
phase "watcher caught up; recall lsp exited ($(grep -c 'background sync' "$LSP_LOG" || true) background syncs in all)"

# 5. compare the kept index with a fresh rebuild ---------------------------------
out=$(cd "$REPO" && RECALL_LIVE_DB=$LIVE_DB RECALL_LIVE_INDEX=$KEPT RECALL_LIVE_MANIFEST=$WORK/out/manifest.json \
  go test -count=1 -run '^TestLiveWriterIndexMatchesRebuild$' -v ./engine/ 2>&1) || { echo "$out" >&2; fail "kept index differs from a rebuild"; }
echo "$out" | grep -E '^\s+livewriter_test' || true
echo "$out" | grep -q -- '--- PASS: TestLiveWriterIndexMatchesRebuild' || { echo "$out" >&2; fail "the comparison did not run (skipped?)"; }
phase "kept index equals a fresh rebuild"
echo "live-writer: PASS in $(( $(date +%s) - T0 ))s"
