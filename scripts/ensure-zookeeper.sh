#!/usr/bin/env bash
# The Debian `zookeeper` package (server jars in /usr/share/java) and a java, so the ZooKeeper store
# suites can start throwaway servers (test/support/zookeeper.ts).
exec "$(dirname "$0")/ensure-debian-packages.sh" zookeeper \
  'test -f /usr/share/java/zookeeper.jar && command -v java' zookeeper
