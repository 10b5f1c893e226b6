#!/usr/bin/env bash
# Builds the Java module in am-proxy/ (the AMRMProxy interceptor jar, its unit tests, and the
# real-YARN / real-Flink test launchers with their classpath files). Offline (-o) when ~/.m2
# already holds everything; online (Maven Central) the first time. Quiet unless it fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
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
tests=$(grep -E "^\[INFO\] Tests run: [0-9]+, Failures" "$log" | tail -1 | sed 's/^\[INFO\] //')
echo "build-am-proxy: ok ($mode, ${ms} ms; java unit tests: ${tests:-none})" >&2
