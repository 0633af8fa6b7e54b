#!/usr/bin/env bash
# The plugin on a real screen: Neovim in tmux (a private tmux server), on a
# copy of the v1 fixture. What headless Neovim cannot show: the builtin
# vim.ui.select fits the screen (no "-- More --", whose Esc raised
# "Keyboard interrupt"), code lenses are drawn (0.12 draws them only with a
# UI), K shows a hover. run.sh sets NVIM, PLUGIN, RECALL_TEST_BIN,
# RECALL_TEST_DB, RECALL_TEST_TMP and ARTEFACTS (screens are saved there).
set -uo pipefail
: "${NVIM:?}" "${PLUGIN:?}" "${RECALL_TEST_BIN:?}" "${RECALL_TEST_DB:?}" "${RECALL_TEST_TMP:?}"
art=${ARTEFACTS:-$RECALL_TEST_TMP}
lens_file=${RECALL_TEST_LENS_FILE:-/tmp/ocgen/recall-v1/projects/ledger/ledger/invoices.py}
command -v tmux >/dev/null || { echo "tui_spec: tmux is missing (run.sh installs it: apt-get install tmux)" >&2; exit 1; }

work="$RECALL_TEST_TMP/tui"
rm -rf "$work"; mkdir -p "$work"/{config,data,state,cache,runtime}
cat >"$work/init.lua" <<LUA
vim.opt.rtp:prepend("$PLUGIN")
vim.cmd("runtime! plugin/recall.lua")
vim.o.laststatus = 2
vim.opt.shortmess:append("I")
require("recall").setup({
  cmd = { "$RECALL_TEST_BIN", "lsp", "--log-file", "$work/lsp.log" },
  db = "$RECALL_TEST_DB",
  index = "$work/index.db",
})
LUA

sock="recall-nvim-test-$$"
tm() { tmux -L "$sock" "$@"; }
trap 'tm kill-server 2>/dev/null || true' EXIT
# 20 rows: the fixture's 25 hits for "the" need two pages.
tm new-session -d -s t -x 100 -y 20 \
  "env XDG_CONFIG_HOME=$work/config XDG_DATA_HOME=$work/data XDG_STATE_HOME=$work/state XDG_CACHE_HOME=$work/cache XDG_RUNTIME_DIR=$work/runtime $NVIM -u $work/init.lua -i NONE -n"

passed=0; failed=0
screen() { tm capture-pane -p -t t; }
save() { screen >"$art/tui-$1.txt"; }
ok() { passed=$((passed + 1)); echo "  ok   $1"; }
bad() { failed=$((failed + 1)); echo "  FAIL $1"; echo "    screen:"; screen | sed 's/^/    | /'; }
# wait_for TEXT [SECONDS]: poll the screen.
wait_for() {
  local end=$(( $(date +%s) + ${2:-15} ))
  while (( $(date +%s) < end )); do
    screen | grep -qF -- "$1" && return 0
    sleep 0.1
  done
  return 1
}
keys() { tm send-keys -t t "$@"; }

sleep 0.5
keys ":RecallSearch the" Enter
if wait_for "Type number and <Enter>" 30; then
  save search
  if screen | grep -qF -- "-- More --"; then
    bad "the picker fits the screen (a -- More -- prompt showed)"
  elif ! screen | grep -qF "more… ("; then
    bad "the picker pages on: no 'more…' row on a 20-line screen"
  else
    # Every row between the prompt and "Type number" is one "N: …" line.
    rows=$(screen | sed -n '/^Recall: .* hits\? for "the"/,/^Type number/p' | sed '1d;$d')
    if [[ -z "$rows" ]] || echo "$rows" | grep -qvE '^[0-9]+: '; then
      bad "each row is one line (a row wrapped or the prompt is missing)"
    else
      ok "the builtin picker: one-line rows, a screenful, a 'more…' row ($(echo "$rows" | wc -l) rows)"
    fi
  fi
else
  bad "the search picker showed within 30 s"
fi

keys Escape
sleep 0.5
save after-esc
if screen | grep -qF "Press ENTER"; then
  bad "after Esc the editor is back, not waiting for Enter"
else
  ok "after Esc the editor is back (no Press ENTER)"
fi
keys ":messages" Enter
sleep 0.5
save messages-after-esc
if screen | grep -qE "Keyboard interrupt|stack traceback|E5108|deprecated"; then
  bad "Esc in the picker is silent"
else
  ok "Esc in the picker is silent (nothing in :messages)"
fi
keys Enter

keys ":edit $lens_file" Enter
if wait_for "past sessions touched this file" 20; then
  save codelens
  ok "the code lens is drawn"
else
  bad "the code lens is drawn"
fi

keys ":enew | call setline(1, 'the quota incident: ses_dd7571907ffe5vPpW7vxTE77tW') | RecallAttach" Enter
sleep 0.5
keys "0fs" "K"
if wait_for "Open transcript" 15; then
  save hover
  ok "K shows the hover"
else
  bad "K shows the hover"
fi

keys Escape ":qa!" Enter
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
