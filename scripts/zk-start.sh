#!/usr/bin/env bash
# Starts a throwaway ZooKeeper from the Debian package on 127.0.0.1: standalone (default) or a
# 3-server ensemble. Prints the connect string; stop it with scripts/zk-stop.sh <dir>.
#
#   scripts/zk-start.sh [1|3] [dir]      dir defaults to a new temp directory
#
# Launches `java -cp /usr/share/java/zookeeper.jar … QuorumPeerMain zoo.cfg` directly (the jar's
# manifest Class-Path names its Debian dependencies), so no system service or /etc config is used.
# Fast timings (tickTime 100 ms) for tests and demos, not for production.
# The test suites use the same recipe from TypeScript: test/support/zookeeper.ts.
set -euo pipefail

SIZE="${1:-1}"
DIR="${2:-$(mktemp -d "${TMPDIR:-/tmp}/blocklist-zk-XXXXXX")}"
ZK_JAR="${BLOCKLIST_ZK_JAR:-/usr/share/java/zookeeper.jar}"
HERE="$(cd "$(dirname "$0")" && pwd)"

if [[ "$SIZE" != 1 && "$SIZE" != 3 ]]; then echo "usage: $0 [1|3] [dir]" >&2; exit 2; fi
if [[ ! -f "$ZK_JAR" ]]; then bash "$HERE/ensure-zookeeper.sh" || exit 1; fi
mkdir -p "$DIR"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# srvr answers with a "Mode:" line once the server serves (standalone, leader or follower).
mode_of() {
  local out
  out="$( (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf srvr >&3 && timeout 1 cat <&3) 2>/dev/null || true)"
  sed -n 's/^Mode: *//p' <<<"$out"
}

declare -a CP QP EP
for i in $(seq 1 "$SIZE"); do CP[$i]=$(free_port); QP[$i]=$(free_port); EP[$i]=$(free_port); done

CLASSPATH="$ZK_JAR"
[[ -f /usr/share/java/slf4j-simple.jar ]] && CLASSPATH="$CLASSPATH:/usr/share/java/slf4j-simple.jar"

for i in $(seq 1 "$SIZE"); do
  d="$DIR/server$i"
  mkdir -p "$d/data"
  {
    echo "tickTime=100"; echo "initLimit=10"; echo "syncLimit=5"
    echo "minSessionTimeout=400"; echo "maxSessionTimeout=60000"
    echo "dataDir=$d/data"; echo "clientPort=${CP[$i]}"; echo "clientPortAddress=127.0.0.1"
    echo "admin.enableServer=false"; echo "4lw.commands.whitelist=srvr,ruok,stat,mntr"
    if [[ "$SIZE" == 3 ]]; then
      for j in 1 2 3; do echo "server.$j=127.0.0.1:${QP[$j]}:${EP[$j]}"; done
    fi
  } >"$d/zoo.cfg"
  [[ "$SIZE" == 3 ]] && echo "$i" >"$d/data/myid"
  nohup java -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
    -cp "$CLASSPATH" org.apache.zookeeper.server.quorum.QuorumPeerMain "$d/zoo.cfg" >"$d/server.log" 2>&1 &
  echo $! >"$d/pid"
done

for i in $(seq 1 "$SIZE"); do
  for _ in $(seq 1 200); do   # bounded: 20 s
    m="$(mode_of "${CP[$i]}")"
    [[ -n "$m" ]] && break
    if ! kill -0 "$(cat "$DIR/server$i/pid")" 2>/dev/null; then echo "server $i exited; see $DIR/server$i/server.log" >&2; exit 1; fi
    sleep 0.1
  done
  if [[ -z "$m" ]]; then echo "server $i did not report a Mode within 20 s; see $DIR/server$i/server.log" >&2; exit 1; fi
  echo "server $i: 127.0.0.1:${CP[$i]} mode $m (pid $(cat "$DIR/server$i/pid"))" >&2
done

CONNECT=""
for i in $(seq 1 "$SIZE"); do CONNECT="${CONNECT:+$CONNECT,}127.0.0.1:${CP[$i]}"; done
echo "$CONNECT" >"$DIR/connect-string"
echo "stop with: $HERE/zk-stop.sh $DIR" >&2
echo "$CONNECT"
