/**
 * What the REST API (and /status, /readyz, the CLI through them) needs from the sync engine.
 * The API depends on this small interface only; NoSync serves when no YARN is configured.
 * The engine hands out data (SyncView); the API words it (src/api/status-presenter.ts).
 */
import { SyncProgress, SyncView, emptyView } from './view';

export type { EvacuationPhase, EvacuationStatus } from './evacuation';
export type { SyncProgress, SyncView } from './view';

/** Whether the app's containers are known for an answer, and why not. */
export type ContainersKnown = { known: true } | { known: false; why: string };

export interface SyncFacade {
  /** A mutation through this sidecar changed the store: reconcile now, not at the next poll. */
  kick(reason: string): void;
  /** The app's task manager containers on one node (FLIP-224's `taskManagers`). */
  taskManagersOn(node: string): string[];
  /**
   * For an answer that depends on the containers (a new block's `taskManagers`, a dry run's
   * releases): read them once if the last read is older than one refresh interval (they are read
   * only while something is blocked), one read for concurrent callers. Whether they are known.
   */
  containersKnown(): Promise<ContainersKnown>;
  /** The host a live container of the app runs on, as last read (undefined: not one of them, or not known). */
  containerHost(containerId: string): string | undefined;
  /** The engine's state as of its last pass. Cheap: the same object until the next pass. */
  view(): SyncView;
  /** At least one successful sync has happened (readiness). */
  synced(): boolean;
  /** A pass running now and how long the passes have been failing (readiness, /status, metrics); absent without an engine. */
  progress?(): SyncProgress;
}

/** Used when the sidecar has no YARN to talk to (API-only mode, tests of the API layer). */
export class NoSync implements SyncFacade {
  private readonly empty: SyncView;
  constructor(enabled = true) {
    this.empty = emptyView(enabled, false);
  }
  kick(): void {}
  taskManagersOn(): string[] {
    return [];
  }
  containerHost(): string | undefined {
    return undefined;
  }
  async containersKnown(): Promise<ContainersKnown> {
    return { known: false, why: 'no sync engine runs (API only): the application\'s containers are not read' };
  }
  view(): SyncView {
    return this.empty;
  }
  synced(): boolean {
    return true;
  }
}
