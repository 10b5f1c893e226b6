#!/usr/bin/env bash
# Builds the Java module in am-proxy/ (the AMRMProxy interceptor jar, its unit tests, and the
# real-YARN / real-Flink test launchers with their classpath files). Offline (-o) when ~/.m2
# already holds everything; online (Maven Central) the first time. Quiet unless it fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

# Nothing changed since the last green build (sources, poms, JDK, Maven) and every jar on the
# launchers' classpaths is still in ~/.m2: skip Maven (saves its ~20-60 s start-up on every run).
stamp_file="$root/am-proxy/target/build-stamp"
stamp="$( (cd "$root/am-proxy" && find . -path '*/target' -prune -o -type f -print | LC_ALL=C sort | xargs sha256sum; javac -version 2>&1; mvn -v 2>/dev/null | sed -n 1p) | sha256sum | cut -d' ' -f1)"
outputs_present() {
  local f
  for f in interceptor/target/test-classpath.txt interceptor/matrix/hadoop-3.3/target/test-classpath.txt interceptor/matrix/hadoop-3.4/target/test-classpath.txt flink-launcher/target/runtime-classpath.txt flink-launcher-1.20/target/runtime-classpath.txt flink-yarn-rig/target/runtime-classpath.txt flink-yarn-rig-1.20/target/runtime-classpath.txt; do
    [[ -f "$root/am-proxy/$f" ]] || return 1
    tr ':' '\n' <"$root/am-proxy/$f" | while read -r jar; do [[ -e "$jar" ]] || exit 1; done || return 1
  done
  ls "$root"/am-proxy/interceptor/target/blocklist-amrm-interceptor-*.jar >/dev/null 2>&1
}
if [[ -f "$stamp_file" && "$(cat "$stamp_file")" == "$stamp" ]] && outputs_present; then
  echo "build-am-proxy: up to date (nothing changed since the last green build)" >&2
  exit 0
fi

# A green build of the same inputs in another checkout on this machine (a clean clone, a worktree)
# left its target dirs in the cache, keyed by the stamp: restore them instead of building again.
# The classpath files name the checkout's own jars by absolute path: rewritten to this checkout.
cache="${BLOCKLIST_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/flink-yarn-blocklist/am-proxy}"
entry="$cache/$stamp.tar"
if [[ -f "$entry" ]]; then
  t0=$(date +%s%N)
  (cd "$root/am-proxy" && find . -path '*/target' -prune -type d -exec rm -rf {} + && tar -xf "$entry")
  built_in="$(cat "$root/am-proxy/interceptor/target/built-in" 2>/dev/null || true)"
  if [[ -n "$built_in" ]]; then
    find "$root/am-proxy" -path '*/target/*classpath.txt' -exec sed -i "s#${built_in}/#${root}/#g" {} +
  fi
  if outputs_present; then
    echo "$stamp" >"$stamp_file"
    echo "build-am-proxy: restored a green build of the same inputs from $entry ($(( ($(date +%s%N) - t0) / 1000000 )) ms; Java unit tests passed there)" >&2
    exit 0
  fi
  echo "build-am-proxy: the cached build lacks a jar of ~/.m2; building" >&2
fi

log="$(mktemp -t am-proxy-build.XXXXXX.log)"
trap 'rm -f "$log"' EXIT
start=$(date +%s%N)
if mvn -B -o -f "$root/am-proxy/pom.xml" package >"$log" 2>&1; then
  mode=offline
elif grep -qE "offline mode|has not been downloaded|Could not resolve|Cannot access" "$log"; then
  echo "build-am-proxy: ~/.m2 lacks something; building online (first run fetches Hadoop and Flink)" >&2
  if ! mvn -B -f "$root/am-proxy/pom.xml" package >"$log" 2>&1; then
    tail -80 "$log" >&2
    echo "build-am-proxy: Maven build failed" >&2
    exit 1
  fi
  mode=online
else
  grep -E "ERROR|FAIL|Tests run:" "$log" | head -60 >&2
  echo "build-am-proxy: Maven build failed" >&2
  exit 1
fi
ms=$(( ($(date +%s%N) - start) / 1000000 ))
# One summary line per module (the interceptor on 3.5, the jar checks on 3.3 and 3.4): their sum.
tests=$(grep -E "^\[INFO\] Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+$" "$log" \
  | awk -F'[:,]' '{r+=$2; f+=$4; e+=$6; s+=$8; m++} END {if (m) printf "Tests run: %d, Failures: %d, Errors: %d, Skipped: %d in %d modules", r, f, e, s, m}')
mkdir -p "$(dirname "$stamp_file")" && echo "$stamp" >"$stamp_file"
# Into the cache for other checkouts (the newest few builds kept; a partial entry is never taken: mv).
mkdir -p "$cache"
printf '%s' "$root" >"$root/am-proxy/interceptor/target/built-in"
(cd "$root/am-proxy" && find . -path '*/target' -prune -type d -print0 | tar --null -cf "$entry.tmp.$$" -T -) && mv "$entry.tmp.$$" "$entry"
rm -f "$entry.tmp.$$"
ls -1t "$cache"/*.tar 2>/dev/null | tail -n +6 | xargs -r rm -f
echo "build-am-proxy: ok ($mode, ${ms} ms; java unit tests: ${tests:-none})" >&2
