/**
 * YARN container exit statuses (hadoop-yarn-api ContainerExitStatus) and which of them say
 * something about the node. The rule is Hadoop's own: Apps.shouldCountTowardsNodeBlacklisting
 * (hadoop-yarn-common org.apache.hadoop.yarn.util.Apps), which YARN's AM blacklisting also uses.
 * It counts INVALID, KILLED_BY_CONTAINER_SCHEDULER, KILLED_FOR_EXCESS_LOGS and every process exit
 * code, and never SUCCESS, ABORTED (released by the application — our own evacuations — or lost
 * with a node), DISKS_FAILED (the node is already marked unhealthy), PREEMPTED, the memory kills
 * (the application's sizing, not the node), KILLED_BY_APPMASTER, KILLED_BY_RESOURCEMANAGER,
 * KILLED_AFTER_APP_COMPLETION.
 */

export const EXIT = {
  SUCCESS: 0,
  INVALID: -1000,
  ABORTED: -100,
  DISKS_FAILED: -101,
  PREEMPTED: -102,
  KILLED_EXCEEDED_VMEM: -103,
  KILLED_EXCEEDED_PMEM: -104,
  KILLED_BY_APPMASTER: -105,
  KILLED_BY_RESOURCEMANAGER: -106,
  KILLED_AFTER_APP_COMPLETION: -107,
  KILLED_BY_CONTAINER_SCHEDULER: -108,
  KILLED_FOR_EXCESS_LOGS: -109,
} as const;

const NAMES = new Map<number, string>(Object.entries(EXIT).map(([k, v]) => [v, k]));

/** Apps.shouldCountTowardsNodeBlacklisting. */
export function shouldCountTowardsNodeBlacklisting(exitStatus: number): boolean {
  switch (exitStatus) {
    case EXIT.SUCCESS:
    case EXIT.ABORTED:
    case EXIT.DISKS_FAILED:
    case EXIT.PREEMPTED:
    case EXIT.KILLED_EXCEEDED_VMEM:
    case EXIT.KILLED_EXCEEDED_PMEM:
    case EXIT.KILLED_BY_APPMASTER:
    case EXIT.KILLED_BY_RESOURCEMANAGER:
    case EXIT.KILLED_AFTER_APP_COMPLETION:
      return false;
    default:
      return true;
  }
}

/** "exit 137", "INVALID (-1000)": how an exit status reads in a cause. */
export function describeExitStatus(exitStatus: number): string {
  const name = NAMES.get(exitStatus);
  if (name !== undefined && exitStatus !== 0) return `${name} (${exitStatus})`;
  return `exit ${exitStatus}`;
}
