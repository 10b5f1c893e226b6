/**
 * What the simulator counts, for tests, the demo and the benchmarks (the control API's
 * GET /sim/v1/counters): calls on each face, blacklist and release traffic, containers placed,
 * lost and killed. Plain numbers; the cluster and the routes add to them.
 */

export interface SimCounters {
  rmRequests: number;
  /** RM requests over HTTP by path, with `?states=` kept (a filtered node list apart from the full one), for who-reads-what tests. */
  rmRequestsByPath: Record<string, number>;
  amrmRequests: number;
  /** Last `user.name` seen on the RM face (simple auth). */
  rmLastUser: string | null;
  /** GET /amrm/v1/blacklist answers: all of them, and the 304s among them (a reader's tag was current). */
  blacklistReads: number;
  blacklistReadsNotModified: number;
  blacklistPosts: number;
  blacklistPostsRejected: number;
  blacklistAdditions: number;
  blacklistRemovals: number;
  releaseCalls: number;
  /** Every id released through the proxy, in order; an id appears once (a second release is "unknown"). */
  releasedContainerIds: string[];
  releaseUnknownIds: string[];
  allocationRounds: number;
  containersAllocated: number;
  containersLost: number;
  containersKilled: number;
  attemptsStarted: number;
  /** Work-preserving RM restarts (each moves the container epoch on and restarts the numbering). */
  rmRestarts: number;
  faultsInjected: { rm: number; amrm: number };
}

export function emptyCounters(): SimCounters {
  return {
    rmRequests: 0,
    rmRequestsByPath: {},
    amrmRequests: 0,
    rmLastUser: null,
    blacklistReads: 0,
    blacklistReadsNotModified: 0,
    blacklistPosts: 0,
    blacklistPostsRejected: 0,
    blacklistAdditions: 0,
    blacklistRemovals: 0,
    releaseCalls: 0,
    releasedContainerIds: [],
    releaseUnknownIds: [],
    allocationRounds: 0,
    containersAllocated: 0,
    containersLost: 0,
    containersKilled: 0,
    attemptsStarted: 0,
    rmRestarts: 0,
    faultsInjected: { rm: 0, amrm: 0 },
  };
}
