#!/usr/bin/env bash
# promtool (Debian's `prometheus` package) checks /metrics against Prometheus' own conventions.
exec "$(dirname "$0")/ensure-debian-packages.sh" promtool 'command -v promtool' prometheus
