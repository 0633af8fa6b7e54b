#!/usr/bin/env bash
# Runs the Neovim plugin's specs in real Neovim 0.7, 0.10 and 0.12 against
# the real `recall lsp` server: the headless specs (test/*_spec.lua) on a
# copy of testdata/opencode/v1/opencode.db or on the bundled demo history,
# and the terminal specs (test/*_spec.sh) in tmux.
#
#   editors/nvim/test/run.sh              # all specs on every version
#   editors/nvim/test/run.sh hover        # specs whose file name contains "hover"
#   NVIM_VERSIONS=0.12 editors/nvim/test/run.sh
#   RECALL_BIN=/path/to/recall editors/nvim/test/run.sh
#   RECALL_NVIM_PLUGIN=/old/checkout/editors/nvim editors/nvim/test/run.sh
#       # these specs against another copy of the plugin (e.g. to see a new
#       # spec fail on the code before a fix)
#
# Neovim 0.7.2 is Debian bookworm's (apt-get install neovim); 0.10 and 0.12
# are Debian trixie's and sid's, unpacked once into
# ${XDG_CACHE_HOME:-~/.cache}/recall-test/nvim/ by test/nvim-host.sh. Test
# artefacts (server logs, terminal screens) go to
# ${XDG_CACHE_HOME:-~/.cache}/recall-test/nvim-run/<version>/; nothing
# tracked is written (test/capture.sh --update rewrites capture.txt).
set -euo pipefail

start=$(date +%s%N)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
plugin=$(dirname "$here")
root=$(cd "$plugin/../.." && pwd)
plugin=${RECALL_NVIM_PLUGIN:-$plugin}
cd "$root"

cache=${XDG_CACHE_HOME:-$HOME/.cache}/recall-test
versions=${NVIM_VERSIONS:-0.7 0.10 0.12}
filter=${1:-}
# The daemons the specs' servers start exit this long after their last
# client (the Makefile sets it too).
export RECALL_DAEMON_IDLE=${RECALL_DAEMON_IDLE:-5s}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/recall-nvim-test.XXXXXX")

bin=${RECALL_BIN:-}
if [[ -z "$bin" ]]; then
  bin="$tmp/recall"
  t0=$(date +%s%N)
  go build -o "$bin" .
  echo "built recall in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
[[ -x "$bin" ]] || { echo "RECALL_BIN=$bin is not executable" >&2; exit 1; }
# The default-setup spec runs setup({}), whose cmd is plain "recall".
mkdir -p "$tmp/bin"
ln -s "$bin" "$tmp/bin/recall"
export PATH="$tmp/bin:$PATH"

# The code lens spec opens a file the fixture's sessions edited. Paths in the
# fixture point into the scratch root of its generator; make the file there
# when it is missing (and remove what we made), so the buffer is a real file.
lens_file=/tmp/ocgen/recall-v1/projects/ledger/ledger/invoices.py
made_lens_file=
if [[ ! -e "$lens_file" ]] && mkdir -p "$(dirname "$lens_file")" 2>/dev/null; then
  printf 'def normalize_invoice_totals(lines):\n    return sum(lines)\n' >"$lens_file" && made_lens_file=1
fi
# The blame spec opens the file the blame fixture's sessions wrote, as
# OpenCode left it (testdata/opencode/blame/after).
blame_file=/tmp/ocgen/recall-blame/projects/billing/billing/tiers.py
made_blame_file=
if [[ ! -e "$blame_file" ]] && mkdir -p "$(dirname "$blame_file")" 2>/dev/null; then
  cp testdata/opencode/blame/after/billing/tiers.py "$blame_file" && made_blame_file=1
fi
cleanup() {
  [[ -n "${KEEP_TMP:-}" ]] || rm -rf "$tmp"
  if [[ -n "$made_lens_file" ]]; then
    rm -f "$lens_file"
    rmdir -p "$(dirname "$lens_file")" 2>/dev/null || true # only the empty dirs we made
  fi
  if [[ -n "$made_blame_file" ]]; then
    rm -f "$blame_file"
    rmdir -p "$(dirname "$blame_file")" 2>/dev/null || true
  fi
}
trap cleanup EXIT
export RECALL_TEST_LENS_FILE="$lens_file" RECALL_TEST_BLAME_FILE="$blame_file"
unset OPENCODE_DB RECALL_NO_DAEMON

total_ok=0; total_failed=0; summary=()

# run_version V: every spec on Neovim V, in a fresh scratch dir of its own.
run_version() {
  local v=$1 t0 nvim ms
  t0=$(date +%s%N)
  if ! nvim=$("$here/nvim-host.sh" "$v"); then
    echo "nvim $v: could not be installed"
    summary+=("nvim $v: 0 passed, 1 failed (not installed)"); total_failed=$((total_failed + 1))
    return
  fi
  local vt="$tmp/$v" art="$cache/nvim-run/$v"
  rm -rf "$art"; mkdir -p "$art"
  mkdir -p "$vt"/{history,config,data,state,cache,run,runtime}
  cp testdata/opencode/v1/opencode.db "$vt/history/opencode.db"
  cp testdata/opencode/blame/opencode.db "$vt/history/blame.db"
  echo "=== $("$nvim" --version | head -n 1) ($nvim, ready in $(( ($(date +%s%N) - t0) / 1000000 )) ms)"

  local ok=0 failed=0 spec name rc counts f spec_ok spec_failed
  for spec in "$here"/*_spec.lua "$here"/*_spec.sh; do
    [[ -e "$spec" ]] || continue
    name=$(basename "$spec"); name=${name%.*}
    if [[ -n "$filter" && "$name" != *"$filter"* ]]; then continue; fi
    rm -f "$vt/run/lsp.log"
    t0=$(date +%s%N)
    set +e
    if [[ "$spec" == *.lua ]]; then
      # -u NONE loads no plugins, so plugin/recall.lua is sourced by hand. A
      # spec ends nvim itself (qa! or cq 1); the trailing cq 3 only runs when
      # the spec died at top level.
      (cd "$vt/run" && env XDG_CONFIG_HOME="$vt/config" XDG_DATA_HOME="$vt/data" XDG_STATE_HOME="$vt/state" \
        XDG_CACHE_HOME="$vt/cache" XDG_RUNTIME_DIR="$vt/runtime" \
        RECALL_TEST_BIN="$bin" RECALL_TEST_DB="$vt/history/opencode.db" RECALL_TEST_INDEX="$vt/index.db" \
        RECALL_TEST_TMP="$vt/run" RECALL_TEST_NVIM_VERSION="$v" RECALL_TEST_BLAME_DB="$vt/history/blame.db" \
        timeout 180 "$nvim" --headless -u NONE -i NONE -n \
        --cmd "set rtp^=$plugin" --cmd "runtime! plugin/recall.lua" \
        -c "luafile $spec" -c "cq 3" </dev/null) >"$vt/out" 2>&1
    else
      env NVIM="$nvim" PLUGIN="$plugin" RECALL_TEST_BIN="$bin" RECALL_TEST_DB="$vt/history/opencode.db" \
        RECALL_TEST_TMP="$vt/run" ARTEFACTS="$art" timeout 180 bash "$spec" >"$vt/out" 2>&1 </dev/null
    fi
    rc=$?
    set -e
    sed 's/^/  /' "$vt/out" | grep -v '^  Recall: \(searching\|listing\|finding\)' || true
    cp "$vt/out" "$art/$name.out"
    spec_ok=0; spec_failed=0
    if counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$vt/out" | tail -n 1); then
      spec_ok=${counts%% *}; f=${counts#*, }; spec_failed=${f%% *}
    fi
    # A spec that died (or timed out) before reporting counts as one failure.
    [[ $rc -eq 0 || $spec_failed -gt 0 ]] || spec_failed=1
    ok=$((ok + spec_ok)); failed=$((failed + spec_failed))
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    if [[ $rc -eq 0 ]]; then
      echo "== $name passed in ${ms} ms"
    else
      echo "== $name FAILED (exit $rc) in ${ms} ms"
      if [[ -s "$vt/run/lsp.log" ]]; then
        echo "-- server log (last 20 lines):"; tail -n 20 "$vt/run/lsp.log"
      fi
    fi
    [[ -s "$vt/run/lsp.log" ]] && cp "$vt/run/lsp.log" "$art/$name.lsp.log"
  done
  echo "nvim $v: $ok passed, $failed failed"
  summary+=("nvim $v: $ok passed, $failed failed")
  total_ok=$((total_ok + ok)); total_failed=$((total_failed + failed))
}

for v in $versions; do
  run_version "$v"
done

echo "--- nvim suite, $(( ($(date +%s%N) - start) / 1000000 )) ms (artefacts in $cache/nvim-run/):"
printf '%s\n' "${summary[@]}"
echo "nvim: $total_ok passed, $total_failed failed"
[[ $total_failed -eq 0 && $total_ok -gt 0 ]]
