#!/usr/bin/env bash
# Starts the blocklist sidecar inside (or beside) a Flink ApplicationMaster container on YARN.
#
# What YARN gives the AM container and how the sidecar uses it:
#   CONTAINER_ID      the AM's container id; the sidecar derives the application id from it
#   HADOOP_CONF_DIR   where yarn-site.xml lives; the RM web address(es) are read from it (HA aware)
#   LOCAL_DIRS        the application's local directories; with the blocklist AMRMProxy interceptor
#                     in the NodeManager (docs/amrm-proxy.md) they hold blocklist-amrm-proxy.json
#                     ({"address", "secretFile", …}) and the secret, readable by this application only.
#                     This script waits for that hand-off (BLOCKLIST_PROXY_WAIT seconds, default 60:
#                     the interceptor writes it when the AM registers) and passes both to the sidecar.
# What you give it (conf/blocklist-am.yaml, BLOCKLIST_* variables, or -Dkey=value arguments):
#   cluster.resource-blocklist.amrm-proxy.address   only when no interceptor hand-off is used
#   cluster.resource-blocklist.store.zookeeper.quorum   the shared ZooKeeper (the profile's store)
#   BLOCKLIST_NODE_OPTIONS                          the runtime's flags (default: the V8 limits below)
#   BLOCKLIST_REST_ADDRESS_FILE                     where the sidecar writes its address (default: beside the
#                                                   hand-off, blocklist-sidecar.json; empty = nowhere)
#
# Usage: scripts/launch-in-am.sh [-Dkey=value …]
# Example (Flink: a wrapper around the AM entry point, or yarn.application-master.env):
#   scripts/launch-in-am.sh &
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"

config="${BLOCKLIST_CONFIG_FILE:-$root/conf/blocklist-am.yaml}"
# The release tarball bundles its Node.js (node/bin/node): a NodeManager host needs none. A checkout
# uses the node on PATH.
node_bin="${BLOCKLIST_NODE:-$root/node/bin/node}"
[ -x "$node_bin" ] || node_bin="node"
cli="${BLOCKLIST_BIN:-$root/bin/blocklist.js}"
[ -f "$cli" ] || cli="$root/bin/blocklist"
yarn_site="${YARN_SITE:-${HADOOP_CONF_DIR:-/etc/hadoop/conf}/yarn-site.xml}"

args=(sidecar -c "$config")
if [ -f "$yarn_site" ]; then
  args+=(--yarn-site "$yarn_site")
else
  echo "launch-in-am: no yarn-site.xml at $yarn_site; set yarn.resourcemanager.webapp.address yourself" >&2
fi
if [ -z "${CONTAINER_ID:-}" ]; then
  echo "launch-in-am: CONTAINER_ID is not set (not in a YARN container?); the application id comes from yarn.application.id or the proxy" >&2
fi

# The interceptor's hand-off: the proxy address and the file holding this application's secret.
find_handoff() {
  local d
  IFS=',' read -r -a dirs <<<"${LOCAL_DIRS:-}"
  for d in "${dirs[@]}"; do
    if [ -n "$d" ] && [ -f "$d/blocklist-amrm-proxy.json" ]; then
      echo "$d/blocklist-amrm-proxy.json"
      return 0
    fi
  done
  return 1
}
if [ -z "${BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_AMRM_PROXY_ADDRESS:-}" ] && [ -n "${LOCAL_DIRS:-}" ]; then
  wait_s="${BLOCKLIST_PROXY_WAIT:-60}"
  handoff=""
  for ((i = 0; i <= wait_s * 2; i++)); do
    if handoff="$(find_handoff)"; then break; fi
    handoff=""
    sleep 0.5
  done
  if [ -n "$handoff" ]; then
    # One JSON object written by the interceptor, read with the runtime the sidecar runs on.
    address="$("$node_bin" -e 'const j=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));process.stdout.write(j.address)' "$handoff")"
    secret_file="$("$node_bin" -e 'const j=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));process.stdout.write(j.secretFile)' "$handoff")"
    export BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_AMRM_PROXY_ADDRESS="$address"
    export BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_AMRM_PROXY_SECRET_FILE="$secret_file"
    # Where this sidecar listens (rest.port 0), beside the hand-off, for whoever looks on this host.
    if [ -z "${BLOCKLIST_REST_ADDRESS_FILE+x}" ]; then
      export BLOCKLIST_REST_ADDRESS_FILE="$(dirname "$handoff")/blocklist-sidecar.json"
    fi
    echo "launch-in-am: AMRM proxy $address (hand-off $handoff)" >&2
  else
    echo "launch-in-am: no blocklist-amrm-proxy.json in \$LOCAL_DIRS after ${wait_s}s (is the interceptor in the NodeManager's AMRMProxy pipeline?); set cluster.resource-blocklist.amrm-proxy.address yourself" >&2
  fi
fi

# V8 for a small, mostly idle service inside the AM's memory budget (docs/deploy.md, Sizing): no
# compilers at all (--jitless: the interpreter only; the sidecar's passes stay in milliseconds,
# docs/benchmarks.md), a small young generation, an old-generation cap inside the budget.
# --jitless turns WebAssembly off, and with it fetch(): the sidecar's code never calls it
# (test/deploy/am-profile.unit.test.ts keeps it so), but Node.js 20 sets fetch up at start and dies
# without WebAssembly, so an older runtime (a checkout's node) gets the optimising compilers off only.
node_major="$("$node_bin" -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -ge 24 ]; then
  default_node_options="--jitless --max-semi-space-size=1 --max-old-space-size=128"
else
  default_node_options="--no-opt --no-maglev --max-semi-space-size=1 --max-old-space-size=128"
fi
BLOCKLIST_NODE_OPTIONS="${BLOCKLIST_NODE_OPTIONS-$default_node_options}"
# shellcheck disable=SC2086 # V8 flags are words, split on purpose
exec "$node_bin" ${BLOCKLIST_NODE_OPTIONS:-} "$cli" "${args[@]}" "$@"
