#!/usr/bin/env bash
# Session blame in a real terminal (tmux): :RecallBlame on the file the
# blame fixture's sessions wrote (testdata/opencode/blame), then the
# transcript of the message that wrote a line. Needs nvim, tmux, go (or
# RECALL_BIN).
#   editors/nvim/test/blame_capture.sh            # writes ${XDG_CACHE_HOME:-~/.cache}/recall-test/nvim-blame-capture.txt
#   editors/nvim/test/blame_capture.sh --update   # rewrites the tracked editors/nvim/blame-capture.txt
#   NVIM=/path/to/nvim editors/nvim/test/blame_capture.sh
# Only --update touches a tracked file, so test runs never rewrite it.
set -euo pipefail
update=
[[ "${1:-}" == "--update" ]] && update=1
nvim=${NVIM:-nvim}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
plugin=$(dirname "$here")
root=$(cd "$plugin/../.." && pwd)
cd "$root"
if [[ -n "$update" ]]; then
  out="$plugin/blame-capture.txt"
else
  out="${XDG_CACHE_HOME:-$HOME/.cache}/recall-test/nvim-blame-capture.txt"
  mkdir -p "$(dirname "$out")"
fi
command -v tmux >/dev/null || { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >&2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/recall-nvim-blame-capture.XXXXXX")
session="recall-blame-capture-$$"
sock="recall-blame-capture-$$"
tmux() { command tmux -L "$sock" "$@"; }
file=/tmp/ocgen/recall-blame/projects/billing/billing/tiers.py
made=
cleanup() {
  tmux kill-server 2>/dev/null || true
  rm -rf "$tmp"
  if [[ -n "$made" ]]; then
    rm -f "$file"
    rmdir -p "$(dirname "$file")" 2>/dev/null || true # only the empty dirs we made
  fi
}
trap cleanup EXIT
bin=${RECALL_BIN:-$tmp/recall}
[[ -n "${RECALL_BIN:-}" ]] || go build -o "$bin" .
mkdir -p "$tmp/history" && cp testdata/opencode/blame/opencode.db "$tmp/history/blame.db"
# The file as OpenCode left it, where its sessions wrote it.
if [[ ! -e "$file" ]] && mkdir -p "$(dirname "$file")"; then
  cp testdata/opencode/blame/after/billing/tiers.py "$file" && made=1
fi

cat >"$tmp/init.lua" <<LUA
vim.opt.rtp:prepend("$plugin")
vim.cmd("runtime! plugin/recall.lua")
vim.o.laststatus = 2
vim.o.ruler = true
vim.o.number = true
vim.opt.shortmess:append("I")
require("recall").setup({
  cmd = { "$bin", "lsp" },
  db = "$tmp/history/blame.db",
  index = "$tmp/index.db",
  codelens = false,
})
LUA

export XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache"
export XDG_RUNTIME_DIR="$tmp/runtime"
tmux new-session -d -s "$session" -x 120 -y 30 "$nvim -u $tmp/init.lua -i NONE -n $file"
keys() { tmux send-keys -t "$session" "$@"; }
# wait_for TEXT: poll the screen (15 s).
wait_for() {
  for _ in $(seq 150); do
    tmux capture-pane -p -t "$session" | grep -qF -- "$1" && return 0
    sleep 0.1
  done
  echo "blame_capture: timed out waiting for: $1" >&2
  tmux capture-pane -p -t "$session" >&2
  exit 1
}
screen() { printf '\n$ %s\n' "$1"; tmux capture-pane -p -t "$session"; }

{
  echo "Recall for Neovim: session blame, a tmux capture of nvim $("$nvim" --version | head -n 1 | cut -d' ' -f2)"
  echo "on testdata/opencode/blame (made by editors/nvim/test/blame_capture.sh)."
  wait_for "TIERS"
  keys ":RecallBlame" Enter
  wait_for "lines written by"
  screen ":RecallBlame   (who wrote each line: session, time in UTC, id; the file's pitfall above line 1)"
  keys ":8" Enter ":RecallBlameOpen" Enter
  wait_for "add-an-enterprise-tier.md"
  wait_for "apply_patch"
  sleep 0.3
  screen ":8 then :RecallBlameOpen   (the transcript at the message whose apply_patch wrote line 8)"
} >"$out"
keys ":qa!" Enter
echo "wrote $out"
