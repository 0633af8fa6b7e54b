# shellcheck shell=bash
# test/prereqs.sh: sourced by the test scripts (editors/nvim/test/run.sh,
# editors/opencode/test/run.sh, test/live-writer.sh) so each checks what it
# needs before it starts, and says everything missing at once with how to
# get it, instead of failing half-way.
#
#   . "$REPO/test/prereqs.sh"
#   need go "Go 1.26 (https://go.dev/dl/)"    # a command, and how to get it
#   need_node 20                              # node >= 20, and npm
#   need_apt sqlite3 sqlite3                  # a command apt can install (package name)
#   prereqs_check "opencode e2e"              # installs the apt ones, or exits 1 listing what is missing
#   as_root apt-get install -y tmux           # root's command: itself as root, else with sudo
#   skip_unless_strict "nvim e2e" "REASON"    # a test that cannot run on this system at all
#
# apt installs run as root, or through sudo when not root; without either
# the package is listed as missing with the command to run.

prereq_missing=()
prereq_apt=()

need() { # need CMD HOW
  command -v "$1" >/dev/null 2>&1 || prereq_missing+=("$1: $2")
}

need_node() { # need_node MAJOR: node >= MAJOR and npm
  local want=$1 have
  if ! command -v node >/dev/null 2>&1; then
    prereq_missing+=("node >= $want and npm: https://nodejs.org/ (or apt-get install nodejs npm on Debian 13+)")
    return
  fi
  have=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$have" -lt "$want" ]; then
    prereq_missing+=("node >= $want (found $(node --version)): https://nodejs.org/")
  fi
  need npm "npm (comes with Node: https://nodejs.org/)"
}

need_apt() { # need_apt CMD PACKAGE
  command -v "$1" >/dev/null 2>&1 || prereq_apt+=("$2")
}

# can_root reports whether as_root can run a command: root, or sudo.
can_root() {
  [ "$(id -u)" = 0 ] || command -v sudo >/dev/null 2>&1
}

as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "needs root: $* (run as root, or install sudo)" >&2
    return 1
  fi
}

# apt_install PKG...: apt-get install as root (or with sudo), quietly.
apt_install() {
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 ||
    { as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 &&
      as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "$@" >/dev/null; }
}

# skip_unless_strict NAME REASON: a test that cannot run on this kind of
# system (no apt for Debian's Neovim) says so and exits 0, loudly; with
# RECALL_TEST_STRICT=1 (CI, .ci/run) it fails instead, so CI never passes a
# test it did not run.
skip_unless_strict() {
  if [ -n "${RECALL_TEST_STRICT:-}" ]; then
    echo "$1: cannot run: $2 (RECALL_TEST_STRICT is set, so this fails)" >&2
    exit 1
  fi
  echo "$1: SKIPPED, not run: $2" >&2
  exit 0
}

prereqs_check() { # prereqs_check NAME
  local name=$1
  if [ ${#prereq_apt[@]} -gt 0 ]; then
    if command -v apt-get >/dev/null 2>&1 && can_root; then
      echo "$name: installing ${prereq_apt[*]} with apt-get" >&2
      apt_install "${prereq_apt[@]}" || prereq_missing+=("${prereq_apt[*]}: apt-get install failed (run: sudo apt-get install ${prereq_apt[*]})")
    else
      prereq_missing+=("${prereq_apt[*]}: install them (apt-get install ${prereq_apt[*]} as root on Debian/Ubuntu)")
    fi
    prereq_apt=()
  fi
  if [ ${#prereq_missing[@]} -gt 0 ]; then
    echo "$name: missing prerequisites (docs/development.md lists what make test needs):" >&2
    printf '  - %s\n' "${prereq_missing[@]}" >&2
    exit 1
  fi
}
