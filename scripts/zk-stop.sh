#!/usr/bin/env bash
# Stops the servers scripts/zk-start.sh started in <dir> (by their recorded pids) and removes
# <dir> unless --keep is given.   scripts/zk-stop.sh <dir> [--keep]
set -euo pipefail
DIR="${1:?usage: $0 <dir> [--keep]}"
for pidfile in "$DIR"/server*/pid; do
  [[ -f "$pidfile" ]] || continue
  pid="$(cat "$pidfile")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done   # bounded: 5 s
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
done
[[ "${2:-}" == "--keep" ]] || rm -rf "$DIR"
