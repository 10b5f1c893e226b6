#!/usr/bin/env bash
# Debian's `chromium`, driven headless by playwright-core (which downloads no browser of its own)
# in the console's browser suite (test/console/). BLOCKLIST_CHROMIUM names another binary.
exec "$(dirname "$0")/ensure-debian-packages.sh" chromium "test -x '${BLOCKLIST_CHROMIUM:-/usr/bin/chromium}'" chromium
