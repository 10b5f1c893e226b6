#!/usr/bin/env bash
# A JDK (17 or newer, with javac) and Maven, so `npm test` can build the Java module in am-proxy/
# and run the real-YARN and real-Flink suites (test/real/). Headless: the build and the
# MiniYARNCluster / Flink MiniCluster need no AWT.
exec "$(dirname "$0")/ensure-debian-packages.sh" java \
  'command -v javac && [ "$(javac -version 2>&1 | sed -E "s/^javac ([0-9]+).*/\1/" | head -1)" -ge 17 ] && command -v mvn' \
  default-jdk-headless maven
