/**
 * What the REST API (and /status, /readyz, the CLI through them) needs from the sync engine.
 * The API depends on this small interface only; NoSync serves when no YARN is configured.
 */
import { NodeState } from '../yarn/types';

/** Per-item enforcement state, as `blocklist list` shows it. */
export type SyncState = 'applied' | 'pending' | 'deferred' | 'evacuating' | 'evacuated' | 'disabled' | 'not-applicable';

/** Graceful-decommission-style sub-state of an evacuating node
 * (https://hadoop.apache.org/docs/stable/hadoop-yarn/hadoop-yarn-site/GracefulDecommission.html). */
export type EvacuationPhase = 'WAIT_CONTAINER' | 'TIMEOUT' | 'READY';

export interface EvacuationStatus {
  /** The item evacuating: a node id, or `<node>/<containerId>` for one task manager. */
  itemId: string;
  node: string;
  phase: EvacuationPhase;
  /** Epoch ms the evacuation started (never reset by a timeout change or a restart). */
  since: number;
  /** Effective timeout in seconds; -1 = forever. */
  timeoutSeconds: number;
  /** Epoch ms deadline, absent when waiting forever. */
  deadline?: number;
  /** Seconds until the deadline: max(0, …); -1 forever; 0 when READY. */
  remainingSeconds: number;
  /** App containers still on the node. */
  containers: string[];
  /** Containers this sidecar asked the proxy to release (kept after they are gone). */
  released: string[];
}

export interface ItemSyncStatus {
  state: SyncState;
  /** Why deferred / pending, in words. */
  detail?: string;
  evacuation?: EvacuationStatus;
}

/** One cluster node as the RM last reported it (for the console's picture of the cluster). */
export interface NodeSummary {
  host: string;
  rack?: string;
  state: NodeState;
}

/** The safety cap as of the last pass: `blockedRunningNodes` of `runningNodes` RUNNING nodes are blacklisted, at most `limit`. */
export interface SafetyCapStatus {
  blockedRunningNodes: number;
  runningNodes: number;
  limit: number;
  maxBlockedFraction: number;
}

export interface SidecarStatus {
  enabled: boolean;
  /** The sidecar's clock when the status was taken (epoch ms), so a reader can count down without trusting its own clock. */
  now?: number;
  applicationId?: string;
  appAttemptId?: string;
  /** Epoch ms of the last pass that read desired and actual and applied the difference. */
  lastSuccessfulSync?: number;
  lastError?: string;
  /** The store is unreachable and the last good snapshot is being enforced. */
  storeDegraded: boolean;
  /** What YARN has now (as last read or pushed) and what we want. */
  blacklist: {
    desired: string[];
    actual: string[];
    /** Each owner's hosts on the AM's blacklist as last read from the proxy (this sidecar writes as `blocklist`). */
    owners?: Record<string, string[]>;
  };
  pending: { additions: string[]; removals: string[]; releases: string[] };
  deferred: string[];
  evacuations: EvacuationStatus[];
  /** Absent until a pass has read the cluster's nodes. */
  safetyCap?: SafetyCapStatus;
  /** Only when asked for (`GET /status?nodes=true`): the node list can be megabytes on a big cluster. */
  nodes?: { readAt: number; list: NodeSummary[] };
}

export interface StatusOptions {
  /** Include the cluster's nodes as last read. */
  nodes?: boolean;
}

export interface SyncFacade {
  /** A mutation through this sidecar changed the store: reconcile now, not at the next poll. */
  kick(reason: string): void;
  /** The app's task manager containers on one node (FLIP-224's `taskManagers`). */
  taskManagersOn(node: string): string[];
  itemStatus(id: string): ItemSyncStatus | undefined;
  status(opts?: StatusOptions): SidecarStatus;
  /** At least one successful sync has happened (readiness). */
  synced(): boolean;
}

/** Used when the sidecar has no YARN to talk to (API-only mode, tests of the API layer). */
export class NoSync implements SyncFacade {
  constructor(private readonly enabled = true) {}
  kick(): void {}
  taskManagersOn(): string[] {
    return [];
  }
  itemStatus(): ItemSyncStatus | undefined {
    return undefined;
  }
  status(): SidecarStatus {
    return {
      enabled: this.enabled,
      storeDegraded: false,
      blacklist: { desired: [], actual: [] },
      pending: { additions: [], removals: [], releases: [] },
      deferred: [],
      evacuations: [],
    };
  }
  synced(): boolean {
    return true;
  }
}
