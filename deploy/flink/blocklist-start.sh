#!/usr/bin/env bash
# Flink's start command for its YARN containers, wrapped. Named in Flink's configuration
# (deploy/flink/config.yaml, docs/deploy.md):
#   yarn.container-start-command-template: bash <home>/deploy/flink/blocklist-start.sh %java% %jvmmem% %jvmopts% %logging% %class% %args% %redirects%
# where <home> is the unpacked release (YARN unpacks yarn.ship-archives into ./<archive file name>/).
#
# When the command is one of Flink's YARN cluster entry points (the JobManager, in the AM container),
# it starts the blocklist sidecar in the background (scripts/launch-in-am.sh), its output in the
# container's log folder; in every container it then execs Flink's command unchanged, so Flink keeps
# the container's process, its signals and its exit status. The sidecar ends with it.
#
# Settings come from the environment (containerized.master.env.* in Flink's configuration):
#   BLOCKLIST_ENABLED=false    start no sidecar (Flink runs as if the wrapper were not there)
#   BLOCKLIST_HOME             the unpacked release, when this script is shipped apart from it
#   BLOCKLIST_*                any sidecar key (BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_STORE_ZOOKEEPER_QUORUM, …)
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
home="${BLOCKLIST_HOME:-$(dirname "$(dirname "$here")")}"

is_cluster_entrypoint() {
  local arg
  for arg in "$@"; do
    case "$arg" in
      org.apache.flink.yarn.entrypoint.Yarn*Cluster*) return 0 ;;
    esac
  done
  return 1
}

if [ "${BLOCKLIST_ENABLED:-true}" != "false" ] && is_cluster_entrypoint "$@"; then
  log_dir="${LOG_DIRS:-.}"
  log_dir="${log_dir%%,*}"
  if [ -x "$home/scripts/launch-in-am.sh" ]; then
    # The audit trail beside Flink's logs, so YARN's log aggregation keeps it with the job's.
    export BLOCKLIST_LOG_AUDIT_FILE="${BLOCKLIST_LOG_AUDIT_FILE:-$log_dir/blocklist-audit.jsonl}"
    # $$ is this shell's PID, which Flink's JVM takes over at the exec below: the sidecar exits when it does.
    "$home/scripts/launch-in-am.sh" --exit-with-parent "$$" </dev/null >>"$log_dir/blocklist-sidecar.log" 2>&1 &
  else
    echo "blocklist-start: no $home/scripts/launch-in-am.sh (set BLOCKLIST_HOME to the unpacked release); Flink starts without the sidecar" >&2
  fi
fi

exec "$@"
