#!/usr/bin/env bash
# Flink's container start command, wrapped: name this script in Flink's
# `yarn.container-start-command-template` and ship it with `yarn.ship-files` (docs/deploy.md):
#
#   yarn.container-start-command-template: bash flink-am-wrapper.sh %java% %jvmmem% %jvmopts% %logging% %class% %args% %redirects%
#
# Flink uses the template for its JobManager (the ApplicationMaster) and its TaskManagers alike.
# In the JobManager's container (Flink's cluster entry point is the main class) it starts the
# blocklist sidecar in the background (launch-in-am.sh, its output in the container's log dir);
# then, in every container, it runs Flink's command unchanged, as the same process.
#
#   BLOCKLIST_HOME   where the sidecar is unpacked (default: ./blocklist in the container's dir)
set -uo pipefail

is_flink_am() {
  local a
  for a in "$@"; do
    case "$a" in
      org.apache.flink.yarn.entrypoint.*ClusterEntrypoint | org.apache.flink.yarn.entrypoint.*ClusterEntryPoint) return 0 ;;
    esac
  done
  return 1
}

if is_flink_am "$@"; then
  home="${BLOCKLIST_HOME:-$PWD/blocklist}"
  log_dir="${LOG_DIRS:-.}"
  log_dir="${log_dir%%,*}"
  if [ -x "$home/scripts/launch-in-am.sh" ] || [ -f "$home/scripts/launch-in-am.sh" ]; then
    bash "$home/scripts/launch-in-am.sh" >>"$log_dir/blocklist-sidecar.log" 2>&1 </dev/null &
    sidecar=$!
    echo "flink-am-wrapper: blocklist sidecar started (pid $sidecar, log $log_dir/blocklist-sidecar.log)" >&2
    # The sidecar ends with the JobManager (this shell's pid becomes Flink's JVM below, by exec),
    # whatever the NodeManager does with a dead container's other processes: it must never meet
    # the next attempt's sidecar.
    am=$$
    (
      while kill -0 "$am" 2>/dev/null; do sleep 1; done
      kill -TERM "$sidecar" 2>/dev/null
    ) </dev/null >/dev/null 2>&1 &
  else
    echo "flink-am-wrapper: no $home/scripts/launch-in-am.sh; Flink starts without the blocklist sidecar" >&2
  fi
fi
exec "$@"
