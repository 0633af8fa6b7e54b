#!/usr/bin/env bash
# Builds the Recall OpenCode plugin into one file, dist/recall.js.
#   editors/opencode/build.sh
# Steps: npm ci (npm install without a lockfile), tsc (strict type check and
# out/ for the unit tests), esbuild bundle (ESM, node/Bun, everything inlined:
# vscode-jsonrpc and the plugin API's tool() + zod 4.1.8, the version
# @opencode-ai/plugin 1.18.33 itself uses), unit tests against the real server
# when RECALL_BIN is set (skip with RECALL_OPENCODE_SKIP_TESTS=1).
# Needs node >= 20 and npm. Prints the bundle's path on its last line.
set -euo pipefail
cd "$(dirname "$0")"

if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
else
  npm install --no-audit --no-fund --loglevel=error
fi
rm -rf out
npx --no-install tsc -p .
mkdir -p dist
# The bundle is ESM; vscode-jsonrpc is CommonJS and require()s node builtins,
# so give the bundle a real require.
npx --no-install esbuild src/index.ts --bundle --platform=node --format=esm --target=node20 \
  --outfile=dist/recall.js --legal-comments=none --log-level=warning \
  --banner:js="// Recall plugin for OpenCode (bundled; source: editors/opencode/src). Built by build.sh.
import { createRequire as __recallCreateRequire } from 'node:module'; const require = __recallCreateRequire(import.meta.url);"
if [ "${RECALL_OPENCODE_SKIP_TESTS:-0}" != 1 ] && [ -n "${RECALL_BIN:-}" ]; then
  node --test out/test/unit/ >test-results.log 2>&1 || { cat test-results.log >&2; exit 1; }
  tail -n 8 test-results.log >&2
  rm -f test-results.log
fi
echo "$PWD/dist/recall.js"
