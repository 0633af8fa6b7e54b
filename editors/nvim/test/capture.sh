#!/usr/bin/env bash
# Regenerates editors/nvim/capture.txt: the plugin in a real terminal (tmux),
# on a copy of the v1 fixture history. Needs nvim, tmux, go (or RECALL_BIN).
#   editors/nvim/test/capture.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
plugin=$(dirname "$here")
root=$(cd "$plugin/../.." && pwd)
cd "$root"
command -v tmux >/dev/null || { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >&2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/recall-nvim-capture.XXXXXX")
session="recall-capture-$$"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$tmp"' EXIT
bin=${RECALL_BIN:-$tmp/recall}
[[ -n "${RECALL_BIN:-}" ]] || go build -o "$bin" .
cp testdata/opencode/v1/opencode.db "$tmp/opencode.db"

cat >"$tmp/init.lua" <<LUA
vim.opt.rtp:prepend("$plugin")
vim.cmd("runtime! plugin/recall.lua")
vim.o.laststatus = 2
vim.o.ruler = true
vim.opt.shortmess:append("I")
require("recall").setup({
  cmd = { "$bin", "lsp" },
  db = "$tmp/opencode.db",
  index = "$tmp/index.db",
})
LUA

export XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache"
tmux new-session -d -s "$session" -x 110 -y 32 "nvim -u $tmp/init.lua -i NONE -n"
keys() { tmux send-keys -t "$session" "$@"; }
# wait_for TEXT: poll the screen (10 s).
wait_for() {
  for _ in $(seq 100); do
    tmux capture-pane -p -t "$session" | grep -qF -- "$1" && return 0
    sleep 0.1
  done
  echo "capture: timed out waiting for: $1" >&2
  tmux capture-pane -p -t "$session" >&2
  exit 1
}
screen() { printf '\n$ %s\n' "$1"; tmux capture-pane -p -t "$session"; }

out="$plugin/capture.txt"
{
  echo "Recall for Neovim: a tmux capture of nvim $(nvim --version | head -n 1 | cut -d' ' -f2) with the plugin"
  echo "on testdata/opencode/v1 (made by editors/nvim/test/capture.sh)."
  sleep 0.5
  keys ":RecallSearch ERR_QUOTA_7731" Enter
  wait_for "Investigate nightly worker failure"
  screen ":RecallSearch ERR_QUOTA_7731   (vim.ui.select lists the hits)"
  keys "1" Enter
  wait_for "recall://session/"
  sleep 0.3
  screen "1<Enter>   (the hit opens as a read-only markdown transcript, cursor on the fact)"
  keys ":edit /tmp/ocgen/recall-v1/projects/ledger/ledger/invoices.py" Enter
  wait_for "past sessions touched this file"
  screen ":edit …/ledger/invoices.py   (code lens from the sessions that edited it)"
  keys ":enew | call setline(1, 'the quota incident: ses_dd7571907ffe5vPpW7vxTE77tW') | RecallAttach" Enter
  sleep 0.5
  keys "0fsK"
  wait_for "Open transcript"
  screen "K on a session id in a scratch buffer   (hover preview from the server)"
} >"$out"
keys ":qa!" Enter
echo "wrote $out"
