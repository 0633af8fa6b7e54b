#!/usr/bin/env bash
# Runs the Neovim plugin's specs in real headless Neovim against the real
# `recall lsp` server on a copy of testdata/opencode/v1/opencode.db.
#
#   editors/nvim/test/run.sh              # all specs
#   editors/nvim/test/run.sh hover        # specs whose file name contains "hover"
#   RECALL_BIN=/path/to/recall editors/nvim/test/run.sh
set -euo pipefail

start=$(date +%s%N)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
plugin=$(dirname "$here")
root=$(cd "$plugin/../.." && pwd)
cd "$root"

if ! command -v nvim >/dev/null 2>&1; then
  echo "nvim not found: installing neovim with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq neovim >&2
fi
echo "$(nvim --version | head -n 1)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/recall-nvim-test.XXXXXX")
cleanup() { [[ -n "${KEEP_TMP:-}" ]] || rm -rf "$tmp"; }
trap cleanup EXIT

bin=${RECALL_BIN:-}
if [[ -z "$bin" ]]; then
  bin="$tmp/recall"
  t0=$(date +%s%N)
  go build -o "$bin" .
  echo "built recall in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
[[ -x "$bin" ]] || { echo "RECALL_BIN=$bin is not executable" >&2; exit 1; }

mkdir -p "$tmp/history" "$tmp/config" "$tmp/data" "$tmp/state" "$tmp/cache" "$tmp/run"
cp testdata/opencode/v1/opencode.db "$tmp/history/opencode.db"

export XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache"
export RECALL_TEST_BIN="$bin" RECALL_TEST_DB="$tmp/history/opencode.db" RECALL_TEST_INDEX="$tmp/index.db" RECALL_TEST_TMP="$tmp/run"
unset OPENCODE_DB

# The code lens spec opens a file the fixture's sessions edited. Paths in the
# fixture point into the scratch root of its generator; make the file there
# when it is missing (and remove what we made), so the buffer is a real file.
lens_file=/tmp/ocgen/recall-v1/projects/ledger/ledger/invoices.py
made_lens_file=
if [[ ! -e "$lens_file" ]] && mkdir -p "$(dirname "$lens_file")" 2>/dev/null; then
  printf 'def normalize_invoice_totals(lines):\n    return sum(lines)\n' >"$lens_file" && made_lens_file=1
fi
cleanup() {
  [[ -n "${KEEP_TMP:-}" ]] || rm -rf "$tmp"
  if [[ -n "$made_lens_file" ]]; then
    rm -f "$lens_file"
    rmdir -p "$(dirname "$lens_file")" 2>/dev/null || true # only the empty dirs we made
  fi
}
export RECALL_TEST_LENS_FILE="$lens_file"

pass=0; fail=0; failed=(); cases_ok=0; cases_failed=0
for spec in "$here"/*_spec.lua; do
  name=$(basename "$spec" .lua)
  if [[ $# -gt 0 && "$name" != *"$1"* ]]; then continue; fi
  echo "== $name"
  rm -f "$tmp/run/lsp.log"
  t0=$(date +%s%N)
  set +e
  # -u NONE loads no plugins, so plugin/recall.lua is sourced by hand. A spec
  # ends nvim itself (qa! or cq 1); the trailing cq 3 only runs when the spec
  # died at top level.
  (cd "$tmp/run" && timeout 180 nvim --headless -u NONE -i NONE -n \
    --cmd "set rtp^=$plugin" --cmd "runtime! plugin/recall.lua" \
    -c "luafile $spec" -c "cq 3" </dev/null) | tee "$tmp/out"
  rc=${PIPESTATUS[0]}
  set -e
  spec_ok=0; spec_failed=0
  if counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$tmp/out" | tail -n 1); then
    spec_ok=${counts%% *}; f=${counts#*, }; spec_failed=${f%% *}
  fi
  # A spec that died (or timed out) before reporting counts as one failure.
  [[ $rc -eq 0 || $spec_failed -gt 0 ]] || spec_failed=1
  cases_ok=$((cases_ok + spec_ok)); cases_failed=$((cases_failed + spec_failed))
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  if [[ $rc -eq 0 ]]; then
    pass=$((pass + 1)); echo "== $name passed in ${ms} ms"
  else
    fail=$((fail + 1)); failed+=("$name"); echo "== $name FAILED (exit $rc) in ${ms} ms"
    [[ -s "$tmp/run/lsp.log" ]] && { echo "-- server log (last 20 lines):"; tail -n 20 "$tmp/run/lsp.log"; }
  fi
done

echo "nvim suite: $(nvim --version | head -n 1), $pass/$((pass + fail)) spec files passed${failed:+ (failed: ${failed[*]})}, $(( ($(date +%s%N) - start) / 1000000 )) ms"
echo "nvim: $cases_ok passed, $cases_failed failed"
[[ $fail -eq 0 && $pass -gt 0 ]]
