#!/usr/bin/env bash
# Starts the blocklist sidecar inside (or beside) a Flink ApplicationMaster container on YARN.
#
# What YARN gives the AM container and how the sidecar uses it:
#   CONTAINER_ID      the AM's container id; the sidecar derives the application id from it
#   HADOOP_CONF_DIR   where yarn-site.xml lives; the RM web address(es) are read from it (HA aware)
# What you give it (conf/blocklist-am.yaml, BLOCKLIST_* variables, or -Dkey=value arguments):
#   cluster.resource-blocklist.amrm-proxy.address   the AMRM REST proxy in or beside the AM
#   cluster.resource-blocklist.store.*              SQLite on durable storage, or the shared ZooKeeper
#
# Usage: scripts/launch-in-am.sh [-Dkey=value …]
# Example (Flink: yarn.application-master.env or a wrapper around the AM entry point):
#   BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_AMRM_PROXY_ADDRESS=127.0.0.1:8049 scripts/launch-in-am.sh &
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"

config="${BLOCKLIST_CONFIG_FILE:-$root/conf/blocklist-am.yaml}"
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

exec node "${BLOCKLIST_BIN:-$root/bin/blocklist}" "${args[@]}" "$@"
