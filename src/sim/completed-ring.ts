/**
 * What the AM sees in onContainersCompleted, kept in a bounded ring with a sequence number (the
 * proxy contract's GET /completed-containers?after=). Exit statuses are Hadoop's
 * (ContainerExitStatus): a container the AM releases through allocate and a container on a node
 * that leaves the scheduler both complete as ABORTED (-100), with SchedulerUtils' diagnostics
 * "Container released by application" / "Container released on a *lost* node"; a kill or an
 * injected failure carries whatever status it is given.
 */

import { randomBytes } from 'node:crypto';

/** Hadoop's ContainerExitStatus values the simulator produces by itself. */
export const EXIT_ABORTED = -100;
export const EXIT_KILLED_EXCEEDED_PMEM = -104;
export const RELEASED_CONTAINER = 'Container released by application';
export const LOST_CONTAINER = 'Container released on a *lost* node';

/** One entry of the proxy's completed-containers ring (what onContainersCompleted reported). */
export interface CompletedContainer {
  seq: number;
  containerId: string;
  /** NodeId host:port of the node the container ran on. */
  nodeId: string;
  exitStatus: number;
  diagnostics: string;
  /** Epoch ms at which the AM saw it complete. */
  finishedAt: number;
}

/** NM-style diagnostics for an exit status (ContainerExecutor / ContainersMonitorImpl wording). */
export function defaultDiagnostics(id: string, exitStatus: number): string {
  if (exitStatus === EXIT_KILLED_EXCEEDED_PMEM) return `Container [${id}] is running beyond physical memory limits. Killing container.`;
  if (exitStatus > 0) return `Exception from container-launch.\nContainer id: ${id}\nExit code: ${exitStatus}`;
  return `Container ${id} completed with exit status ${exitStatus}`;
}

/** One answer of GET /completed-containers. */
export interface CompletedPage {
  containers: CompletedContainer[];
  next: number;
  epoch: string;
}

export class CompletedRing {
  private readonly ring: CompletedContainer[] = [];
  private seq = 0;
  /**
   * Names this ring's numbering, which begins again at 1 in a restarted proxy: drawn from the OS,
   * never from the simulator's seeded random, since a restarted simulator runs with the same seed
   * (as the blacklist's ETag epoch is, am-blacklist.ts).
   */
  readonly epoch = randomBytes(8).toString('hex');

  constructor(private readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error('completedRingSize must be a positive integer');
  }

  /** Numbers the entry; the oldest fall out past the ring's size. */
  record(entry: Omit<CompletedContainer, 'seq'>): void {
    this.ring.push({ seq: ++this.seq, ...entry });
    if (this.ring.length > this.size) this.ring.splice(0, this.ring.length - this.size);
  }

  /**
   * Completed containers with a sequence number above `after`, oldest first, and the sequence
   * number to ask after next time. An `after` beyond the newest entry means the caller remembers
   * a proxy that has since restarted (its numbering began again): it gets the whole ring. The
   * epoch tells a reader whose cursor the restarted ring has already numbered past.
   */
  after(after: number): CompletedPage {
    const from = after > this.seq ? 0 : after;
    const containers = this.ring.filter((c) => c.seq > from);
    return { containers: containers.map((c) => ({ ...c })), next: this.seq, epoch: this.epoch };
  }
}
