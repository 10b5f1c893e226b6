/**
 * What the engine shows the API: data as of the last pass, never words. The API's status
 * presenter (src/api/status-presenter.ts) turns it into the item and sidecar states of the REST
 * API and the CLI.
 */
import { BlockedItem } from '../model/item';
import { BlacklistDiff, DesiredPlan, NodeView } from './desired';
import { EvacuationStatus } from './evacuation';
import { ReleaseKind, Wait } from './evacuation-steps';
import { FlinkKnowledge } from './flink-view';
import { ContainerIndex } from './watch-containers';

/** Host names (YARN's default) or each NodeManager's host:port (a scheduler that includes the port matches nothing else). */
export interface NodeNaming {
  entries: 'host' | 'host:port';
  why: string;
}
import { NodeIndex } from './known-hosts';

/** The stage at which a pass failed. */
export type PassStage = 'store' | 'attempt' | 'nodes' | 'blacklist-read' | 'push' | 'containers' | 'release';

export interface SyncView {
  /** cluster.resource-blocklist.enabled */
  enabled: boolean;
  /** A sync engine runs (false: API only, nothing is pushed, items carry no sync state). */
  engine: boolean;
  applicationId?: string;
  appAttemptId?: string;
  /** Epoch ms of the last pass that read a live store and actual and applied the difference. */
  lastSuccessfulSync?: number;
  /** The last failed pass, until a pass succeeds. */
  lastFailure?: { stage: PassStage; error: string };
  /** The store could not be read lately: `items` is the last good snapshot. */
  storeError?: string;
  /** The store's items as last read; absent before the first read. */
  items?: readonly BlockedItem[];
  /** Lookups kept with that snapshot of the items (the API's index by id). */
  itemLookups?: { byId?: Map<string, BlockedItem> };
  /** The last decision's plan; absent before the first pass got that far. */
  plan?: DesiredPlan;
  maxBlockedFraction: number;
  /** What YARN has, as last read or pushed; absent while unknown (being re-read). */
  actual?: ReadonlySet<string>;
  /** Each owner's hosts on the AM's blacklist as last read from the proxy. */
  owners?: Readonly<Record<string, readonly string[]>>;
  /** The cluster's nodes as last read, and when. */
  nodes?: { readAt: number; list: readonly NodeView[]; known?: NodeIndex };
  /** The difference still to push (empty once pushed). */
  pending: BlacklistDiff;
  pendingReleases: readonly string[];
  /** Every evacuation as of the last pass, by item id. */
  evacuations: ReadonlyMap<string, EvacuationStatus>;
  /** The app's containers as last read (MARK_BLOCKED items' task managers are looked up in it). */
  containers?: ContainerIndex;
  amContainerId?: string;
  /** Flink as the evacuations last read it. */
  flink?: FlinkKnowledge;
  /** How blacklist entries name nodes, and why (absent: host names, nothing decided). */
  nodeNaming?: NodeNaming;
  /** When Flink was last read (wall ms): a view the evacuations still decide on while nothing asks for a read ages. */
  flinkReadAt?: number;
  /** Why each covered task manager not released yet waits, as the last pass decided. */
  taskManagerWaits?: ReadonlyMap<string, Wait>;
  /** Containers this sidecar asked to release (id → host), and how each went. */
  released?: ReadonlyMap<string, string>;
  releaseKinds?: ReadonlyMap<string, ReleaseKind>;
}

/** How the engine's passes are going right now (not as of the last pass, as SyncView is). */
export interface SyncProgress {
  /** A pass is running, since this instant (epoch ms): one that runs long waits on a peer. */
  passRunningSince?: number;
  /** Every pass has failed since this instant (epoch ms): the first failed pass after the last good one. */
  failingSince?: number;
}

export function emptyView(enabled: boolean, engine: boolean, maxBlockedFraction = 0): SyncView {
  return { enabled, engine, maxBlockedFraction, pending: { additions: [], removals: [] }, pendingReleases: [], evacuations: new Map() };
}
