#!/usr/bin/env bash
# Makes sure the Debian `zookeeper` package (server jars in /usr/share/java) and a java are present,
# so the ZooKeeper store suites can start throwaway servers (test/support/zookeeper.ts).
#
# Installs the package only when that is clearly wanted and possible without a prompt:
#   - CI=true (the CI image is ours to change), or
#   - running as root with no terminal on stdin (a provisioning script, a container build).
# Otherwise it just reports what is missing and exits 1; the suites then skip with that reason
# outside CI (in CI a missing ZooKeeper fails the run: scripts/test.js).
set -euo pipefail

ZK_JAR=/usr/share/java/zookeeper.jar

have_zk() { [[ -f "$ZK_JAR" ]] && command -v java >/dev/null 2>&1; }

if have_zk; then
  exit 0
fi

want_install=false
if [[ "${CI:-}" == "true" ]]; then want_install=true; fi
if [[ "$(id -u)" == "0" && ! -t 0 ]]; then want_install=true; fi

if [[ "$want_install" != "true" ]]; then
  echo "ensure-zookeeper: $ZK_JAR or java missing; install with: sudo apt-get install -y zookeeper" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-zookeeper: no apt-get on this machine; install the Debian/Ubuntu 'zookeeper' package (or put zookeeper.jar at $ZK_JAR)" >&2
  exit 1
fi

SUDO=""
if [[ "$(id -u)" != "0" ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "ensure-zookeeper: not root and no password-less sudo; cannot install zookeeper" >&2
    exit 1
  fi
fi

echo "ensure-zookeeper: installing the Debian zookeeper package" >&2
export DEBIAN_FRONTEND=noninteractive
# --no-install-recommends: the server needs only the jars and a JRE, not the GUI inspector's extras.
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends zookeeper >/dev/null

if ! have_zk; then
  echo "ensure-zookeeper: installed, but $ZK_JAR or java is still missing" >&2
  exit 1
fi
echo "ensure-zookeeper: ok ($(readlink -f "$ZK_JAR"))" >&2
