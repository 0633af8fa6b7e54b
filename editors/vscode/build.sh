#!/usr/bin/env bash
# Builds the Recall VS Code extension into a .vsix.
#   editors/vscode/build.sh [OUT.vsix]    (default: editors/vscode/recall-<version>.vsix)
# Steps: npm ci (npm install without a lockfile), tsc (strict) -> out/,
# unit tests (node --test; skip with RECALL_VSCODE_SKIP_TESTS=1), vsce package.
# Needs node >= 20 and npm. Prints the .vsix path on its last line.
set -euo pipefail
cd "$(dirname "$0")"
OUT=${1:-}

if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
else
  npm install --no-audit --no-fund --loglevel=error
fi
rm -rf out
npx --no-install tsc -p .
if [ "${RECALL_VSCODE_SKIP_TESTS:-0}" != 1 ]; then
  node --test out/test/unit/*.test.js >/dev/null 2>test-results.log || { cat test-results.log >&2; node --test out/test/unit/*.test.js; exit 1; }
  rm -f test-results.log
fi
VERSION=$(node -p 'require("./package.json").version')
[ -n "$OUT" ] || OUT="$PWD/recall-$VERSION.vsix"
case "$OUT" in /*) ;; *) OUT="$OLDPWD/$OUT" ;; esac
npx --no-install vsce package --allow-missing-repository --skip-license --out "$OUT" >&2
echo "$OUT"
