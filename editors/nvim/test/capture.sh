#!/usr/bin/env bash
# The plugin in a real terminal (tmux), on a copy of the v1 fixture history.
# Needs nvim, tmux, go (or RECALL_BIN).
#   editors/nvim/test/capture.sh            # writes ${XDG_CACHE_HOME:-~/.cache}/recall-test/nvim-capture.txt
#   editors/nvim/test/capture.sh --update   # rewrites the tracked editors/nvim/capture.txt
#   NVIM=/path/to/nvim editors/nvim/test/capture.sh
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
  out="$plugin/capture.txt"
else
  out="${XDG_CACHE_HOME:-$HOME/.cache}/recall-test/nvim-capture.txt"
  mkdir -p "$(dirname "$out")"
fi
# shellcheck source=../../../test/prereqs.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/test/prereqs.sh"
need_apt tmux tmux
prereqs_check "nvim capture"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/recall-nvim-capture.XXXXXX")
session="recall-capture-$$"
sock="recall-capture-$$"
tmux() { command tmux -L "$sock" "$@"; }
trap 'tmux kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT
bin=${RECALL_BIN:-$tmp/recall}
[[ -n "${RECALL_BIN:-}" ]] || go build -o "$bin" .
mkdir -p "$tmp/history" && cp testdata/opencode/v1/opencode.db "$tmp/history/opencode.db"

# The fixture's sessions edited this file, under its generator's scratch
# root; make it when it is missing (what the capture shows of it), and
# remove what we made.
lens_file=/tmp/ocgen/recall-v1/projects/ledger/ledger/invoices.py
if [[ ! -e "$lens_file" ]] && mkdir -p "$(dirname "$lens_file")"; then
  cat >"$lens_file" <<'PY'
"""Invoice helpers for the ledger package."""
from decimal import Decimal, ROUND_HALF_UP


def normalize_invoice_totals(invoices):
    """Return the invoices with a rounded 'total' field."""
    out = []
    for inv in invoices:
        total = sum(Decimal(str(line["amount"])) for line in inv["lines"])
        cents = total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        out.append({**inv, "total": float(cents)})
    return out


def reconcileLedgerDrift(expected, actual):
    """camelCase on purpose: legacy name kept for the accounting export."""
    return round(actual - expected, 2)
PY
  trap 'tmux kill-server 2>/dev/null || true; rm -rf "$tmp"; rm -f "$lens_file"; rmdir -p "$(dirname "$lens_file")" 2>/dev/null || true' EXIT
fi

cat >"$tmp/init.lua" <<LUA
vim.opt.rtp:prepend("$plugin")
vim.cmd("runtime! plugin/recall.lua")
vim.o.laststatus = 2
vim.o.ruler = true
vim.opt.shortmess:append("I")
require("recall").setup({
  cmd = { "$bin", "lsp" },
  db = "$tmp/history/opencode.db",
  index = "$tmp/index.db",
})
LUA

export XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache"
export XDG_RUNTIME_DIR="$tmp/runtime"
tmux new-session -d -s "$session" -x 110 -y 32 "$nvim -u $tmp/init.lua -i NONE -n"
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

{
  echo "Recall for Neovim: a tmux capture of nvim $("$nvim" --version | head -n 1 | cut -d' ' -f2) with the plugin"
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
