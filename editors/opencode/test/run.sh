#!/usr/bin/env bash
# End-to-end test of the Recall OpenCode plugin inside the real OpenCode.
#
#   editors/opencode/test/run.sh            (RECALL_BIN=/path/to/recall optional)
#
# 1. tools: node/npm (required), sqlite3 + ripgrep (apt-get when missing, as root)
# 2. the server: $RECALL_BIN, else `go build` of the repo into a temp dir
# 3. the plugin: build.sh (npm ci, tsc, esbuild -> dist/recall.js) and the unit
#    tests (node --test) against that server
# 4. ocgen (tools/ocgen, copied to a temp dir) runs the real `opencode`
#    (npm opencode-ai@1.18.33, installed by gen.sh into $OCGEN_CACHE) against a
#    scripted model: test/scenario.json. OpenCode loads the plugin from the
#    global opencode.json line `"plugin": [["file://…/dist/recall.js", {…}]]`.
#    Session "plant" finds ERR_QUOTA_7731 in a log; session "recall" calls
#    history_search, history_read {hit: 1}, searches for a phrase of its own
#    prompt (from itself and from a subagent: both must come back empty) and
#    history_sessions; session "later" finds "recall" by that phrase and gets
#    clear errors for a bad hit and a bad cursor. The plugin is configured
#    with two histories (OpenCode's own, and testdata/opencode/v2 as
#    "archive"): a search for a fact of each names both sources.
# 5. assertions on the tool parts OpenCode recorded (sqlite3 on its opencode.db),
#    no `recall lsp` left running, and test/out/transcript.txt.
#
# Knobs: RECALL_BIN, OCGEN_DIR (default: tools/ocgen of this repository), OCGEN_CACHE (default $XDG_CACHE_HOME/recall-test/ocgen), KEEP=1 keeps the
# scratch dir, UPDATE_TRANSCRIPT=1 copies the transcript to
# editors/opencode/transcript.txt.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PLUGIN_DIR=$(cd "$HERE/.." && pwd)
REPO=$(cd "$PLUGIN_DIR/../.." && pwd)
export OCGEN_CACHE=${OCGEN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recall-test/ocgen}
export DEBIAN_FRONTEND=noninteractive

T0=$(date +%s)
phase_start=$T0
phase() {
  local now; now=$(date +%s)
  [ -z "${PHASE:-}" ] || echo "--- $PHASE: $((now - phase_start)) s"
  PHASE=$1; phase_start=$now
  echo "=== $PHASE"
}

WORK=$(mktemp -d /tmp/recall-oc-e2e.XXXXXX)
GEN_PID=""
cleanup() {
  local rc=$?
  if [ -n "$GEN_PID" ] && kill -0 "$GEN_PID" 2>/dev/null; then
    # gen.sh and its children (ocgen, opencode serve, the mock) share our process group's child tree
    pkill -TERM -P "$GEN_PID" 2>/dev/null || true
    kill -TERM "$GEN_PID" 2>/dev/null || true
  fi
  for pid in $(server_pids); do kill -TERM "$pid" 2>/dev/null || true; done
  if [ "${KEEP:-0}" = 1 ] || [ $rc -ne 0 ]; then
    echo "scratch kept: $WORK"
  else
    rm -rf "$WORK" "${ROOT:-/nonexistent}"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# `recall lsp` processes started for this run: their --log-file is ours.
server_pids() {
  local p
  for p in /proc/[0-9]*; do
    [ -r "$p/cmdline" ] || continue
    if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -- "lsp --log-file $WORK/"; then
      basename "$p"
    fi
  done
}

fail() { echo "FAIL: $*" >&2; FAILED=$((FAILED + 1)); }
pass() { echo "ok: $*"; PASSED=$((PASSED + 1)); }
PASSED=0
FAILED=0

phase "tools"
command -v node >/dev/null || { echo "node >= 20 is required" >&2; exit 1; }
command -v npm >/dev/null || { echo "npm is required" >&2; exit 1; }
missing=()
command -v sqlite3 >/dev/null || missing+=(sqlite3)
command -v rg >/dev/null || missing+=(ripgrep)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "missing: ${missing[*]} (install them, or run as root with apt-get)" >&2; exit 1
  fi
fi
echo "node $(node --version), sqlite3 $(sqlite3 --version | cut -d' ' -f1), rg $(rg --version | head -n1 | cut -d' ' -f2)"

phase "recall binary"
if [ -z "${RECALL_BIN:-}" ]; then
  (cd "$REPO" && CGO_ENABLED=0 go build -o "$WORK/recall" .)
  RECALL_BIN=$WORK/recall
fi
RECALL_BIN=$(cd "$(dirname "$RECALL_BIN")" && pwd)/$(basename "$RECALL_BIN")
export RECALL_BIN
echo "recall: $RECALL_BIN"

phase "plugin build + unit tests"
PLUGIN_JS=$("$PLUGIN_DIR/build.sh" | tail -n1)
[ -f "$PLUGIN_JS" ] || { echo "build.sh made no bundle" >&2; exit 1; }
echo "bundle: $PLUGIN_JS ($(wc -c <"$PLUGIN_JS") bytes)"

phase "ocgen + opencode"
OCGEN_SRC=${OCGEN_DIR:-$REPO/tools/ocgen}
[ -f "$OCGEN_SRC/gen.sh" ] || { echo "ocgen not found at $OCGEN_SRC (set OCGEN_DIR to a copy of tools/ocgen)" >&2; exit 1; }
# A copy, so a run never writes into the checkout.
cp -r "$OCGEN_SRC" "$WORK/ocgen" || { echo "copying $OCGEN_SRC failed" >&2; exit 1; }
chmod -R u+w "$WORK/ocgen"
ROOT=/tmp/ocgen/$(basename "$WORK")
LOG=$WORK/recall.log
# The second history: a copy of the committed v2 fixture (Recall only reads it).
ARCHIVE=$WORK/archive/opencode.db
mkdir -p "$(dirname "$ARCHIVE")" && cp "$REPO/testdata/opencode/v2/opencode.db" "$ARCHIVE"
sed -e "s#@ROOT@#$ROOT#g" -e "s#@PLUGIN@#$PLUGIN_JS#" -e "s#@RECALL_BIN@#$RECALL_BIN#" -e "s#@LOG@#$LOG#" -e "s#@ARCHIVE@#$ARCHIVE#" \
  "$HERE/scenario.json" >"$WORK/scenario.json"
OUT=$WORK/out
set +e
OCGEN_JOBS=1 OCGEN_REQLOG=1 bash "$WORK/ocgen/gen.sh" "$WORK/scenario.json" "$OUT" >"$WORK/gen.log" 2>&1 &
GEN_PID=$!
wait "$GEN_PID"
GEN_RC=$?
set -e
GEN_PID=""
tail -n 12 "$WORK/gen.log"
if [ $GEN_RC -ne 0 ] || [ ! -f "$OUT/opencode.db" ]; then
  echo "gen.sh failed (exit $GEN_RC); log: $WORK/gen.log" >&2
  exit 1
fi

phase "assertions"
DB=$OUT/opencode.db
python3 "$HERE/check_e2e.py" "$DB" "$OUT/manifest.json" "$WORK/transcript.txt" "$OUT/requests.jsonl" | tee "$WORK/checks.txt" || true
PASSED=$(grep -c '^ok:' "$WORK/checks.txt" || true)
FAILED=$(grep -c '^FAIL:' "$WORK/checks.txt" || true)
grep -q '^checks:' "$WORK/checks.txt" || fail "check_e2e.py did not finish"

# The exclusion did the work: outside OpenCode the phrase is found in that session.
RECALL_SID=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); m=m["sessions"] if isinstance(m,dict) else m; print(next(s["id"] for s in m if s["key"]=="recall"))' "$OUT/manifest.json")
if "$RECALL_BIN" search --db "$DB" --index "$WORK/check-index.db" --quiet --json zephyr-lantern-0931 | grep -q "$RECALL_SID"; then
  pass "the phrase is indexed in the excluding session (exclusion, not staleness, hid it)"
else
  fail "recall search outside OpenCode does not find the phrase in $RECALL_SID"
fi
starts=$(grep -c 'recall-plugin start:' "$LOG" || true)
[ "$starts" = 1 ] && pass "the plugin started one server, lazily, for all sessions" || fail "server starts: $starts (log $LOG)"
grep -q 'recall-plugin sync: ' "$LOG" && pass "session.idle made the plugin sync" || fail "no idle sync in $LOG"
left=$(server_pids)
[ -z "$left" ] && pass "no recall lsp left running after OpenCode stopped" || fail "recall lsp still running: $left"
grep -E 'recall-plugin (dispose|exit)' "$LOG" | sed 's/^/  log: /' || true

mkdir -p "$HERE/out" && cp "$WORK/transcript.txt" "$HERE/out/transcript.txt"
if [ "${UPDATE_TRANSCRIPT:-0}" = 1 ] && [ "$FAILED" -eq 0 ]; then cp "$WORK/transcript.txt" "$PLUGIN_DIR/transcript.txt"; fi
echo "transcript: $HERE/out/transcript.txt"

phase "done"
echo "total: $(( $(date +%s) - T0 )) s"
echo "e2e: $PASSED passed, $FAILED failed"
[ $FAILED -eq 0 ]
