/**
 * What the REST API (and /status, /readyz, the CLI through them) needs from the sync engine.
 * The API depends on this small interface only; NoSync serves when no YARN is configured.
 */

/** Per-item enforcement state, as `blocklist list` shows it. */
export type SyncState = 'applied' | 'pending' | 'deferred' | 'evacuating' | 'evacuated' | 'disabled' | 'not-applicable';

/** Graceful-decommission-style sub-state of an evacuating node (seed 001). */
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

export interface SidecarStatus {
  enabled: boolean;
  applicationId?: string;
  appAttemptId?: string;
  /** Epoch ms of the last pass that read desired and actual and applied the difference. */
  lastSuccessfulSync?: number;
  lastError?: string;
  /** The store is unreachable and the last good snapshot is being enforced. */
  storeDegraded: boolean;
  /** What YARN has now (as last read or pushed) and what we want. */
  blacklist: { desired: string[]; actual: string[] };
  pending: { additions: string[]; removals: string[]; releases: string[] };
  deferred: string[];
  evacuations: EvacuationStatus[];
}

export interface SyncFacade {
  /** A mutation through this sidecar changed the store: reconcile now, not at the next poll. */
  kick(reason: string): void;
  /** The app's task manager containers on one node (seed 000's `taskManagers`). */
  taskManagersOn(node: string): string[];
  itemStatus(id: string): ItemSyncStatus | undefined;
  status(): SidecarStatus;
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
