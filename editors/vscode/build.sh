#!/usr/bin/env bash
# Builds the Recall VS Code extension: one platform .vsix per target, each
# with the `recall` server cross-compiled into server/recall[.exe] (the
# convention of rust-analyzer's release packaging), plus one target-less
# .vsix without a server (it starts recall.serverPath or `recall` on PATH).
#
#   editors/vscode/build.sh [--out-dir DIR] [--server BIN] [TARGET...]
#
# TARGET: linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64, or
# "none" for the target-less package. Default: the four unix targets and
# none (win32-x64 only when asked: the server does not build for Windows
# yet, see notes). Output: DIR/recall-<target>-<version>.vsix and
# DIR/recall-<version>.vsix (default DIR: editors/vscode/dist). --server BIN
# packs that binary instead of building one (one target only; the e2e test
# packs the binary it tests).
#
# Steps: npm ci (skipped when node_modules matches the lockfile), tsc
# (strict) -> out/, esbuild -> out/extension.js (the one file packed), unit tests (node --test; with RECALL_BIN set also the
# contract test against the real server; skip all with
# RECALL_VSCODE_SKIP_TESTS=1), then per target: go build (CGO_ENABLED=0,
# -trimpath, the Makefile's version stamp) and vsce package --target.
# Needs node >= 20, npm and go. stdout gets the .vsix paths, one a line;
# everything else goes to stderr.
set -euo pipefail
cd "$(dirname "$0")"
EXT=$PWD
REPO=$(cd ../.. && pwd)

OUT_DIR=$EXT/dist
SERVER_BIN=
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out-dir) OUT_DIR=${2:?--out-dir needs a directory}; shift 2 ;;
    --server) SERVER_BIN=${2:?--server needs the path of a recall binary}; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    -*) echo "build.sh: unknown flag $1 (see build.sh --help)" >&2; exit 2 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(linux-x64 linux-arm64 darwin-x64 darwin-arm64 none)
case "$OUT_DIR" in /*) ;; *) OUT_DIR="$OLDPWD/$OUT_DIR" ;; esac

goos_goarch() {
  case "$1" in
    linux-x64) echo linux amd64 ;;
    linux-arm64) echo linux arm64 ;;
    darwin-x64) echo darwin amd64 ;;
    darwin-arm64) echo darwin arm64 ;;
    win32-x64) echo windows amd64 ;;
    *) return 1 ;;
  esac
}
for t in "${TARGETS[@]}"; do
  [ "$t" = none ] || goos_goarch "$t" >/dev/null || {
    echo "build.sh: unknown target $t; want linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64 or none" >&2; exit 2; }
done
if [ -n "$SERVER_BIN" ]; then
  [ ${#TARGETS[@]} -eq 1 ] && [ "${TARGETS[0]}" != none ] || {
    echo "build.sh: --server packs one binary, so give exactly one target (e.g. build.sh --server $SERVER_BIN linux-x64)" >&2; exit 2; }
  [ -x "$SERVER_BIN" ] || { echo "build.sh: --server $SERVER_BIN is not an executable file" >&2; exit 2; }
  case "$SERVER_BIN" in /*) ;; *) SERVER_BIN="$OLDPWD/$SERVER_BIN" ;; esac
fi

# server/ is what vsce packs for a target; one build at a time may use it.
exec 9> "$EXT/.build.lock"
flock 9
trap 'rm -rf "$EXT/server"' EXIT

# npm ci again only when the lockfile changed since the last install (warm
# rebuilds skip ~20-40 s); RECALL_VSCODE_CLEAN=1 forces it.
LOCK_SUM=$(sha256sum package-lock.json package.json | sha256sum | cut -d' ' -f1)
if [ "${RECALL_VSCODE_CLEAN:-0}" = 1 ] || [ "$(cat node_modules/.recall-lock-sum 2>/dev/null)" != "$LOCK_SUM" ]; then
  npm ci --no-audit --no-fund --loglevel=error >&2
  echo "$LOCK_SUM" > node_modules/.recall-lock-sum
fi
rm -rf out
npx --no-install tsc -p . >&2   # the type check, and out/ for the unit tests
# The extension itself is one bundled file (how rust-analyzer ships its
# client): the extension host then loads one module, not vscode-languageclient's
# ~130, which cost up to ~1.8 s of the first command on a busy 2-core host.
npx --no-install esbuild src/extension.ts --bundle --platform=node --format=cjs --target=node18 \
  --external:vscode --log-level=warning --outfile=out/extension.js >&2
if [ "${RECALL_VSCODE_SKIP_TESTS:-0}" != 1 ]; then
  node --test out/test/unit/*.test.js >&2
fi

VERSION=$(node -p 'require("./package.json").version')
# The same stamp as `make build`, so `recall version` names the commit.
STAMP=$(git -C "$REPO" describe --tags --always --dirty 2>/dev/null || echo dev)
mkdir -p "$OUT_DIR"
for t in "${TARGETS[@]}"; do
  rm -rf server
  if [ "$t" = none ]; then
    out="$OUT_DIR/recall-$VERSION.vsix"
    npx --no-install vsce package --no-dependencies --allow-missing-repository --skip-license --out "$out" >&2
  else
    exe=recall; [ "$t" = win32-x64 ] && exe=recall.exe
    mkdir -p server
    if [ -n "$SERVER_BIN" ]; then
      cp "$SERVER_BIN" "server/$exe"
    else
      read -r goos goarch < <(goos_goarch "$t")
      echo "build.sh: go build $goos/$goarch -> server/$exe" >&2
      (cd "$REPO" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath \
        -ldflags "-s -w -X github.com/recallhq/recall/commands.Version=$STAMP" -o "$EXT/server/$exe" .) >&2 || {
        echo "build.sh: the server did not build for $t ($goos/$goarch); see the go errors above" >&2; exit 1; }
    fi
    chmod 755 "server/$exe"
    out="$OUT_DIR/recall-$t-$VERSION.vsix"
    npx --no-install vsce package --no-dependencies --allow-missing-repository --skip-license --target "$t" --out "$out" >&2
  fi
  echo "$out"
done
