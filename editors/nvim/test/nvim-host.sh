#!/usr/bin/env bash
# Prints the path of a Neovim of the asked version, installing it once:
#
#   editors/nvim/test/nvim-host.sh 0.7    # Debian bookworm's 0.7.2 (apt-get install neovim)
#   editors/nvim/test/nvim-host.sh 0.10   # trixie's 0.10.x, unpacked into a private root
#   editors/nvim/test/nvim-host.sh 0.12   # sid's 0.12.x, unpacked into a private root
#
# 0.10 and 0.12 follow docs/test-hosts.md ("Neovim newer than 0.7.2"): the
# suite's debs, its libc6 included, are downloaded with a private apt config
# (the system's sources and libc stay untouched), extracted with dpkg-deb and
# the binary is patchelf'ed onto that libc. The root is kept under
# ${XDG_CACHE_HOME:-~/.cache}/recall-test/nvim/<suite>/ and reused. Progress
# goes to stderr; stdout is the binary's path only.
set -euo pipefail
want=${1:?usage: nvim-host.sh 0.7|0.10|0.12}
# shellcheck source=../../../test/prereqs.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/test/prereqs.sh" # as_root: apt as root, or with sudo
cache=${RECALL_NVIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recall-test/nvim}

say() { echo "nvim-host: $*" >&2; }

version_of() { "$1" --version 2>/dev/null | head -n 1 | sed -n 's/^NVIM v\([0-9]*\.[0-9]*\).*/\1/p'; }

case "$want" in
0.7)
  exe=$(command -v nvim || true)
  if [[ -z "$exe" || "$(version_of "$exe")" != 0.7 ]]; then
    exe=/usr/bin/nvim
    if [[ "$(version_of "$exe")" != 0.7 ]]; then
      say "installing Debian's neovim (0.7.2) with apt-get"
      t0=$(date +%s%N)
      as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
      as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq neovim >&2
      say "installed in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    fi
  fi
  [[ "$(version_of "$exe")" == 0.7 ]] || { say "$exe is not Neovim 0.7 ($("$exe" --version | head -n 1))"; exit 1; }
  echo "$exe"
  exit 0
  ;;
0.10) suite=trixie ;;
0.12) suite=sid ;;
*) say "unknown version $want (want 0.7, 0.10 or 0.12)"; exit 2 ;;
esac

dest="$cache/$suite"
exe="$dest/root/usr/bin/nvim"
if [[ -f "$dest/.installed" && -x "$exe" ]] && [[ "$(XDG_STATE_HOME="$dest/state" version_of "$exe")" == "$want" ]]; then
  echo "$exe"
  exit 0
fi

say "installing Neovim $want from Debian $suite into $dest (once; about 35 s, 10 MB)"
t0=$(date +%s%N)
rm -rf "$dest"
mkdir -p "$dest"/{apt/lists/partial,apt/cache/archives/partial,debs,root,state}
command -v patchelf >/dev/null || as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq patchelf >&2
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" >"$dest/apt/sources.list"
apt_private=(-o Dir::Etc::SourceList="$dest/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
  -o Dir::State::Lists="$dest/apt/lists" -o Dir::Cache="$dest/apt/cache")
apt-get "${apt_private[@]}" update -qq >&2
# The runtime libraries nvim links besides the system's; the lists differ per
# suite (checked with apt-cache show neovim/<suite>; re-check when they move).
pkgs="neovim neovim-runtime libc6 libluajit-5.1-2 libluajit-5.1-common libunibilium4 libuv1t64 lua-lpeg lua-luv"
if [[ "$suite" == trixie ]]; then
  pkgs="$pkgs libmsgpack-c2 libtree-sitter0.22 libvterm0"
else
  pkgs="$pkgs libtree-sitter0.26 libutf8proc3"
fi
# shellcheck disable=SC2086
(cd "$dest/debs" && apt-get "${apt_private[@]}" download $pkgs 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
for d in "$dest"/debs/*.deb; do dpkg-deb -x "$d" "$dest/root"; done
lib="$dest/root/usr/lib/x86_64-linux-gnu"
patchelf --set-interpreter "$lib/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$lib" "$exe"
got=$(XDG_STATE_HOME="$dest/state" version_of "$exe")
[[ "$got" == "$want" ]] || { say "$suite's neovim is $got, not $want: update the suite in nvim-host.sh"; exit 1; }
rm -rf "$dest/apt" "$dest/debs"
touch "$dest/.installed"
say "installed $(XDG_STATE_HOME="$dest/state" "$exe" --version | head -n 1) in $(( ($(date +%s%N) - t0) / 1000000 )) ms, $(du -sh "$dest" | cut -f1)"
echo "$exe"
