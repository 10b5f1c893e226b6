#!/usr/bin/env bash
# Makes sure a real part a test suite needs is installed from Debian's packages.
#
#   scripts/ensure-debian-packages.sh <name> '<check command>' <package>...
#
# e.g. ensure-debian-packages.sh zookeeper 'test -f /usr/share/java/zookeeper.jar && command -v java' zookeeper
#
# The check runs first; when it passes nothing is installed. Otherwise the packages are installed
# only when that is clearly wanted and possible without a prompt:
#   - CI=true (the CI machine is ours to change), or
#   - running as root with no terminal on stdin (a provisioning script, a container build).
# Otherwise it says what is missing and exits 1; the suite then skips with that reason outside CI
# (in CI a missing part fails the run: scripts/test.js).
set -euo pipefail

name=$1; check=$2; shift 2
have() { bash -c "$check" >/dev/null 2>&1; }

if have; then exit 0; fi

want_install=false
if [[ "${CI:-}" == "true" ]]; then want_install=true; fi
if [[ "$(id -u)" == "0" && ! -t 0 ]]; then want_install=true; fi

if [[ "$want_install" != "true" ]]; then
  echo "ensure-$name: missing; install with: sudo apt-get install -y --no-install-recommends $*" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-$name: no apt-get on this machine; install the Debian/Ubuntu package(s): $*" >&2
  exit 1
fi

SUDO=""
if [[ "$(id -u)" != "0" ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "ensure-$name: not root and no password-less sudo; cannot install $*" >&2
    exit 1
  fi
fi

echo "ensure-$name: installing Debian package(s): $*" >&2
export DEBIAN_FRONTEND=noninteractive
# One `apt-get update` per machine boot is enough: the lists are fresh for every later part.
stamp=/tmp/.blocklist-apt-updated
if [[ ! -f $stamp ]]; then $SUDO apt-get update -qq && touch "$stamp"; fi
# --no-install-recommends: the suites need the servers and tools, not their GUIs and extras.
$SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null

if ! have; then
  echo "ensure-$name: installed, but the check still fails: $check" >&2
  exit 1
fi
echo "ensure-$name: ok" >&2
