#!/usr/bin/env bash
# Makes sure a JDK (17 or newer, with javac) and Maven are present, so `npm test` can build the
# Java module in am-proxy/ and run the real-YARN and real-Flink suites (test/real/).
#
# Installs Debian's packages only when that is clearly wanted and possible without a prompt:
#   - CI=true (the CI image is ours to change), or
#   - running as root with no terminal on stdin (a provisioning script, a container build).
# Otherwise it reports what is missing and exits 1; the real suites then skip with that reason
# outside CI (in CI a missing JDK or Maven fails the run: scripts/test.js).
set -euo pipefail

java_major() {
  command -v javac >/dev/null 2>&1 || { echo 0; return; }
  javac -version 2>&1 | sed -E 's/^javac ([0-9]+).*/\1/' | head -1
}

have_all() { [[ "$(java_major)" -ge 17 ]] && command -v mvn >/dev/null 2>&1; }

if have_all; then
  exit 0
fi

want_install=false
if [[ "${CI:-}" == "true" ]]; then want_install=true; fi
if [[ "$(id -u)" == "0" && ! -t 0 ]]; then want_install=true; fi

if [[ "$want_install" != "true" ]]; then
  echo "ensure-java: a JDK >= 17 (javac) or Maven is missing; install with: sudo apt-get install -y default-jdk-headless maven" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-java: no apt-get on this machine; install a JDK >= 17 and Maven" >&2
  exit 1
fi

SUDO=""
if [[ "$(id -u)" != "0" ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "ensure-java: not root and no password-less sudo; cannot install a JDK and Maven" >&2
    exit 1
  fi
fi

echo "ensure-java: installing Debian's default-jdk-headless and maven" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# headless: the build and the MiniYARNCluster / Flink MiniCluster need no AWT.
$SUDO apt-get install -y -qq --no-install-recommends default-jdk-headless maven >/dev/null

if ! have_all; then
  echo "ensure-java: installed, but javac >= 17 or mvn is still missing" >&2
  exit 1
fi
echo "ensure-java: ok (javac $(java_major), $(mvn -v 2>/dev/null | head -1))" >&2
