#!/usr/bin/env bash
# Builds the Recall VS Code extension into a .vsix.
#   editors/vscode/build.sh [OUT.vsix]    (default: editors/vscode/recall-<version>.vsix)
# Steps: npm ci (skipped when node_modules matches the lockfile), tsc (strict) -> out/,
# unit tests (node --test; with RECALL_BIN set also the contract test against
# the real server; skip all with RECALL_VSCODE_SKIP_TESTS=1), vsce package.
# Needs node >= 20 and npm. Prints the .vsix path on its last line.
set -euo pipefail
cd "$(dirname "$0")"
OUT=${1:-}

# npm ci again only when the lockfile changed since the last install (warm
# rebuilds skip ~20-40 s); RECALL_VSCODE_CLEAN=1 forces it.
LOCK_SUM=$(sha256sum package-lock.json package.json | sha256sum | cut -d' ' -f1)
if [ "${RECALL_VSCODE_CLEAN:-0}" = 1 ] || [ "$(cat node_modules/.recall-lock-sum 2>/dev/null)" != "$LOCK_SUM" ]; then
  npm ci --no-audit --no-fund --loglevel=error
  echo "$LOCK_SUM" > node_modules/.recall-lock-sum
fi
rm -rf out
npx --no-install tsc -p .
if [ "${RECALL_VSCODE_SKIP_TESTS:-0}" != 1 ]; then
  node --test out/test/unit/*.test.js >&2   # stdout is for the .vsix path only
fi
VERSION=$(node -p 'require("./package.json").version')
[ -n "$OUT" ] || OUT="$PWD/recall-$VERSION.vsix"
case "$OUT" in /*) ;; *) OUT="$OLDPWD/$OUT" ;; esac
npx --no-install vsce package --allow-missing-repository --skip-license --out "$OUT" >&2
echo "$OUT"
