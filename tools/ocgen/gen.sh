#!/usr/bin/env bash
# gen.sh SCENARIO OUTDIR
#
# Generates real OpenCode session data: installs opencode-ai (if missing) into
# a cache under /tmp, builds the ocgen driver, starts the scripted mock model
# on 127.0.0.1, runs `opencode serve` with HOME pointed at a scratch folder,
# plays the scenario, and leaves OUTDIR/opencode.db (+ manifest.json, logs).
#
# Environment knobs:
#   OPENCODE_VERSION  opencode-ai version to install   (default 1.18.33)
#   OPENCODE_BIN      use this opencode binary instead of installing one
#   OCGEN_CACHE       cache dir for the install + ocgen build
#                     (default $XDG_CACHE_HOME/recall-test/ocgen, else ~/.cache/...)
#   OCGEN_JOBS        projects played in parallel      (default 3)
#   OCGEN_REQLOG=1    also write OUTDIR/requests.jsonl (every model request)
#   OCGEN_NO_APT=1    never try `apt-get install ripgrep` when rg is missing
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 SCENARIO OUTDIR" >&2
  exit 2
fi
SCENARIO=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
OUTDIR=$2
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VERSION=${OPENCODE_VERSION:-1.18.33}
CACHE=${OCGEN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recall-test/ocgen}
mkdir -p "$CACHE" "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)

# 1. opencode binary ---------------------------------------------------------
if [ -z "${OPENCODE_BIN:-}" ]; then
  PREFIX=$CACHE/opencode-$VERSION
  case "$(uname -m)" in
    x86_64|amd64) ARCH=x64 ;;
    aarch64|arm64) ARCH=arm64 ;;
    *) ARCH=$(uname -m) ;;
  esac
  OS=$(uname -s | tr 'A-Z' 'a-z')
  find_bin() {
    for cand in "$PREFIX/node_modules/opencode-$OS-$ARCH/bin/opencode" \
                "$PREFIX/node_modules/opencode-$OS-$ARCH-baseline/bin/opencode"; do
      if [ -x "$cand" ]; then echo "$cand"; return 0; fi
    done
    return 1
  }
  if ! OPENCODE_BIN=$(find_bin); then
    echo "gen.sh: installing opencode-ai@$VERSION into $PREFIX" >&2
    mkdir -p "$PREFIX"
    [ -f "$PREFIX/package.json" ] || echo '{"private":true}' > "$PREFIX/package.json"
    npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error "opencode-ai@$VERSION" >&2
    OPENCODE_BIN=$(find_bin) || { echo "gen.sh: no opencode binary for $OS-$ARCH after install" >&2; exit 1; }
  fi
fi
echo "gen.sh: opencode $("$OPENCODE_BIN" --version) at $OPENCODE_BIN" >&2

# 2. ripgrep (opencode's grep/glob tools shell out to rg) --------------------
if ! command -v rg >/dev/null 2>&1; then
  asroot=""
  [ "$(id -u)" = 0 ] || asroot=sudo # apt needs root: sudo when not root
  if [ -z "${OCGEN_NO_APT:-}" ] && command -v apt-get >/dev/null 2>&1 && { [ -z "$asroot" ] || command -v sudo >/dev/null 2>&1; }; then
    echo "gen.sh: installing ripgrep with ${asroot:+sudo }apt-get" >&2
    ($asroot apt-get install -y -q ripgrep >/dev/null 2>&1 || { $asroot apt-get update -q >/dev/null 2>&1 && $asroot apt-get install -y -q ripgrep >/dev/null 2>&1; }) || true
  fi
  command -v rg >/dev/null 2>&1 || echo "gen.sh: WARNING: rg not found; grep/glob tool calls will end as tool errors (\"ripgrep execution failed\")" >&2
fi

# 3. build the driver + mock model -------------------------------------------
# OCGEN_BIN: a driver built already (the tests build it from the repository's
# module before they copy this folder out of it, where `go build .` has no
# go.mod to build with).
if [ -n "${OCGEN_BIN:-}" ]; then
  [ -x "$OCGEN_BIN" ] || { echo "gen.sh: OCGEN_BIN=$OCGEN_BIN is not an executable" >&2; exit 1; }
else
  OCGEN_BIN=$CACHE/ocgen
  ( cd "$HERE" && go build -o "$OCGEN_BIN" . ) || { echo "gen.sh: building ocgen in $HERE failed (outside the recall module, set OCGEN_BIN to a built driver: go build -o ocgen ./tools/ocgen)" >&2; exit 1; }
fi

# 4. generate -------------------------------------------------------------
ARGS=(gen -scenario "$SCENARIO" -out "$OUTDIR" -opencode "$OPENCODE_BIN" -j "${OCGEN_JOBS:-3}" -v)
if [ -n "${OCGEN_REQLOG:-}" ]; then ARGS+=(-reqlog "$OUTDIR/requests.jsonl"); fi
"$OCGEN_BIN" "${ARGS[@]}"

if command -v sqlite3 >/dev/null 2>&1; then
  echo "gen.sh: $OUTDIR/opencode.db:" >&2
  sqlite3 "$OUTDIR/opencode.db" \
    "select 'projects', count(*) from project union all
     select 'sessions (top-level)', count(*) from session where parent_id is null union all
     select 'sessions (subagent)', count(*) from session where parent_id is not null union all
     select 'messages (v1)', count(*) from message union all
     select 'parts (v1)', count(*) from part union all
     select 'session_message (v2)', count(*) from session_message;" | sed 's/^/  /' >&2
fi
