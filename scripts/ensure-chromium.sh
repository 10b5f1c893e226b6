#!/usr/bin/env bash
# Makes sure Debian's `chromium` is present, so the console's browser suite (test/console/) can
# drive it headless through playwright-core (which downloads no browser of its own).
#
# Installs the package only when that is clearly wanted and possible without a prompt:
#   - CI=true (the CI image is ours to change), or
#   - running as root with no terminal on stdin (a provisioning script, a container build).
# Otherwise it just reports what is missing and exits 1; the suite then skips with that reason
# outside CI (in CI a missing chromium fails the run: scripts/test.js and test/console/browser.ts).
set -euo pipefail

CHROMIUM="${BLOCKLIST_CHROMIUM:-/usr/bin/chromium}"

if [[ -x "$CHROMIUM" ]]; then
  exit 0
fi

want_install=false
if [[ "${CI:-}" == "true" ]]; then want_install=true; fi
if [[ "$(id -u)" == "0" && ! -t 0 ]]; then want_install=true; fi

if [[ "$want_install" != "true" ]]; then
  echo "ensure-chromium: $CHROMIUM missing; install with: sudo apt-get install -y chromium" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: no apt-get on this machine; install Debian's 'chromium' package (or set BLOCKLIST_CHROMIUM to a chromium binary)" >&2
  exit 1
fi

SUDO=""
if [[ "$(id -u)" != "0" ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "ensure-chromium: not root and no password-less sudo; cannot install chromium" >&2
    exit 1
  fi
fi

echo "ensure-chromium: installing the Debian chromium package" >&2
export DEBIAN_FRONTEND=noninteractive
# --no-install-recommends: headless needs the browser and its libraries, not desktop extras.
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null

if [[ ! -x "$CHROMIUM" ]]; then
  echo "ensure-chromium: installed, but $CHROMIUM is still missing" >&2
  exit 1
fi
echo "ensure-chromium: ok ($("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM"))" >&2
