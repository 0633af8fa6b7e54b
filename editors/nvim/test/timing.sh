#!/usr/bin/env bash
# First-result timing of the Neovim plugin on a history of your choice (the
# README's figures): the index is built first (warm), then each Neovim times
# :RecallSearch to the picker.
#   editors/nvim/test/timing.sh /path/to/opencode.db [0.7 0.10 0.12]
# e.g. on ~600 sessions: go run ./tools/ocgen clone -mode sql -from testdata/corpus/public -out DIR -n 16
set -euo pipefail
db=${1:?usage: timing.sh OPENCODE_DB [versions…]}; shift
versions=${*:-0.7 0.10 0.12}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
plugin=$(dirname "$here")
root=$(cd "$plugin/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/recall-nvim-timing.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bin=${RECALL_BIN:-$tmp/recall}
[[ -n "${RECALL_BIN:-}" ]] || (cd "$root" && go build -o "$bin" .)
db=$(cd "$(dirname "$db")" && pwd)/$(basename "$db")
# The Neovims first, from the user's cache (nvim-host.sh), before XDG_* point
# into the scratch dir.
declare -A nvims
for v in $versions; do nvims[$v]=$("$here/nvim-host.sh" "$v"); done
mkdir -p "$tmp"/{config,data,state,cache,runtime}
export XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache"
export XDG_RUNTIME_DIR="$tmp/runtime" RECALL_DAEMON_IDLE=${RECALL_DAEMON_IDLE:-2s}
t0=$(date +%s%N)
"$bin" sync --db "$db" --index "$tmp/index.db" --quiet
echo "index built in $(( ($(date +%s%N) - t0) / 1000000 )) ms: $("$bin" status --db "$db" --index "$tmp/index.db" --json --no-sync --quiet | sed -n 's/.*"sessions":\([0-9]*\).*"parts":\([0-9]*\).*/\1 sessions, \2 parts/p')"
for v in $versions; do
  nvim=${nvims[$v]}
  echo "== $("$nvim" --version | head -n 1)"
  RECALL_TEST_BIN="$bin" RECALL_TEST_DB="$db" RECALL_TEST_INDEX="$tmp/index.db" \
    "$nvim" --headless -u NONE -i NONE -n --cmd "set rtp^=$plugin" --cmd "runtime! plugin/recall.lua" \
    -c "luafile $here/timing.lua" </dev/null
  sleep 3 # the daemon of the previous Neovim idles out
done
