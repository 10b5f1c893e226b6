/**
 * The sidecar's two windows into YARN, as small interfaces so the sync engine's tests fake only
 * this edge:
 *  - ResourceManagerReader: the real Hadoop RM REST API (read-only): nodes, the app, its attempts
 *    and live containers (Hadoop's ResourceManagerRest.md).
 *  - AmrmProxy: the AMRM REST proxy contract (docs/amrm-proxy.openapi.yaml), the write path:
 *    only the ApplicationMaster may call the RM's allocate, so blacklist updates and container
 *    releases travel through the AM's own AMRMClient.
 */

/** YARN's NodeState (hadoop-yarn-api NodeState). */
export type NodeState = 'NEW' | 'RUNNING' | 'UNHEALTHY' | 'DECOMMISSIONING' | 'DECOMMISSIONED' | 'LOST' | 'REBOOTED' | 'SHUTDOWN';
export const NODE_STATES: readonly NodeState[] = ['NEW', 'RUNNING', 'UNHEALTHY', 'DECOMMISSIONING', 'DECOMMISSIONED', 'LOST', 'REBOOTED', 'SHUTDOWN'];

export interface ClusterNode {
  /** NodeId, host:port. */
  id: string;
  /** nodeHostName: what a node item's id names. */
  host: string;
  rack: string;
  state: NodeState;
  healthReport: string;
  numContainers: number;
  nodeHTTPAddress?: string;
}

/**
 * The RM's node counts by state (GET /ws/v1/cluster/metrics, "clusterMetrics"): about 1 KB whatever
 * the cluster's size, against megabytes for the node list at 10,000 nodes. The safety cap's
 * denominator is activeNodes (RUNNING), so reading this instead of the list every refresh is what
 * keeps an idle sidecar light on the RM.
 */
export interface ClusterMetrics {
  /** Nodes in state RUNNING. */
  activeNodes: number;
  decommissioningNodes: number;
  decommissionedNodes: number;
  lostNodes: number;
  unhealthyNodes: number;
  rebootedNodes: number;
  shutdownNodes: number;
  totalNodes: number;
}

export interface ClusterInfo {
  id?: string;
  state: string;
  haState?: string;
  resourceManagerVersion?: string;
}

export interface ApplicationInfo {
  id: string;
  state: string;
  name?: string;
  user?: string;
  queue?: string;
  currentAppAttemptId?: string;
  /** The RM's web proxy of the AM's tracking page (`http://rm:8088/proxy/<app>/`): Flink's REST API, GET only. */
  trackingUrl?: string;
  /** `host:port` the AM registered with; Flink registers its REST port here (port 0: none). */
  amRPCAddress?: string;
}

export interface AttemptInfo {
  applicationId: string;
  appAttemptId: string;
  /** True once the AM has registered with the RM (only then does a blacklist reach the RM). */
  registered: boolean;
  /**
   * The attempt's AM container, as the proxy knows it (the container the NodeManager launched the
   * AM in). Absent from proxies that predate it: the RM's attempt report names it too.
   */
  amContainerId?: string;
  /** The serving proxy's version (the interceptor jar's, or `<product>-simulator`); absent from older proxies. */
  interceptorVersion?: string;
}

export interface AppContainer {
  containerId: string;
  /** NodeId host:port. */
  nodeId: string;
  /** Host part of nodeId. */
  host: string;
  nodeHttpAddress?: string;
  /** YARN ContainerState (NEW, RUNNING, COMPLETE, …) or the proxy's view. */
  state: string;
}

/** One application attempt as the RM lists it (ResourceManagerRest.md, "Cluster Application Attempts API"). */
export interface AttemptSummary {
  appAttemptId: string;
  /** The AM container of the attempt. */
  containerId?: string;
  nodeId?: string;
  startTime?: number;
  /** appAttemptState (newer RMs only). */
  state?: string;
  /** The scheduler's per-app blacklist as the RM shows it (AppAttemptInfo.blacklistedNodes, newer RMs only). */
  blacklistedNodes?: string[];
}

export interface ResourceManagerReader {
  clusterInfo(): Promise<ClusterInfo>;
  /** Node counts by state: the cheap read for the safety cap's denominator. */
  clusterMetrics(): Promise<ClusterMetrics>;
  /**
   * The node list; `states` narrows it on the RM side (RMWebServices' `states` filter). `need.hosts`
   * names hosts the caller has not seen yet: a reader that answers from a shared or cached reading
   * (the shared cluster state) must not answer with one that lacks them if a fresher one can be had.
   */
  nodes(states?: readonly NodeState[], need?: { hosts: readonly string[] }): Promise<ClusterNode[]>;
  /**
   * One node by its NodeId (host:port, GET /ws/v1/cluster/nodes/{nodeid}); undefined when the RM
   * knows no such node. Absent: the reader can only list (callers then read the list).
   */
  node?(nodeId: string): Promise<ClusterNode | undefined>;
  application(appId: string): Promise<ApplicationInfo>;
  attempts(appId: string): Promise<AttemptSummary[]>;
  containers(appId: string, attemptId: string): Promise<AppContainer[]>;
  /** One key of the RM's own configuration (undefined: no value); absent from readers that cannot tell. */
  confValue?(key: string): Promise<string | undefined>;
}

export interface ReleaseResult {
  released: string[];
  /** Ids the proxy did not know (already gone): counted as done, not as errors. */
  unknown: string[];
}

/** The owner the proxy assumes when an update names none: the sidecar's own set. */
export const SIDECAR_BLACKLIST_OWNER = 'blocklist';

/** The AM's one blacklist, shared by several owners (the sidecar, Flink's own blocklist, …). */
export interface BlacklistView {
  /** The union of all owners' hosts: what the AM's client sends the RM. */
  blacklist: string[];
  /** Each owner's hosts (owners with none may be left out). */
  owners: Record<string, string[]>;
}

/** One owner's change: additions first, then removals (a host in both ends up removed, YARN's rule). */
export interface BlacklistChange {
  additions: string[];
  removals: string[];
}

/** A container the AM saw complete (onContainersCompleted), as the proxy's ring keeps it. */
export interface CompletedContainer {
  /** Position in the proxy's ring; ask `after` the highest seen. */
  seq: number;
  containerId: string;
  /** NodeId host:port. */
  nodeId: string;
  /** Host part of nodeId. */
  host: string;
  /** Hadoop ContainerExitStatus (negative) or the process's exit code. */
  exitStatus: number;
  diagnostics: string;
  /** Epoch ms. */
  finishedAt: number;
}

export interface CompletedContainersPage {
  containers: CompletedContainer[];
  /**
   * Entries the client could not read (each with why). Left out rather than failing the page: one
   * bad entry must not stall every later one behind the cursor.
   */
  skipped?: string[];
  /** The seq to pass as `after` next time. Lower than the `after` sent: the proxy restarted. */
  next: number;
  /**
   * The proxy's epoch: drawn at random when its ring is made, never repeating across restarts. A
   * `next` is meaningful only under the epoch it came with; another epoch means the numbering began
   * again (even when it already passed the old `next`). Absent from a proxy that predates epochs.
   */
  epoch?: string;
}

/**
 * How a reader knows an answer of the proxy's GET /blacklist again: the proxy's strong entity tag
 * (RFC 9110 §8.8.3; it changes with every change of any owner's set and never repeats across a
 * proxy restart), or, from a proxy that sends none, the SHA-256 of the answer's bytes.
 */
export type BlacklistVersion = { kind: 'etag'; etag: string } | { kind: 'digest'; digest: string };

export type BlacklistReading = { unchanged: true } | { unchanged: false; view: BlacklistView; version: BlacklistVersion };

/** What a versioned proxy says of one POST /blacklist: the version it changed, and the one it made. */
export interface BlacklistWrite {
  previousEtag: string;
  etag: string;
}

export interface AmrmProxy {
  attempt(): Promise<AttemptInfo>;
  blacklist(): Promise<BlacklistView>;
  /**
   * The blacklist unless it is still the version the caller holds (then `unchanged`, nothing
   * parsed). Optional: a client without it is asked blacklist().
   */
  blacklistSince?(known: BlacklistVersion | undefined): Promise<BlacklistReading>;
  /**
   * Changes only `owner`'s set (default: the sidecar's, {@link SIDECAR_BLACKLIST_OWNER}). A proxy
   * that versions its blacklist says which version the change was applied to and which it made;
   * one that predates versions (or a client that does not ask) gives nothing.
   */
  updateBlacklist(change: BlacklistChange, owner?: string): Promise<BlacklistWrite | void>;
  containers(): Promise<AppContainer[]>;
  release(containerIds: string[]): Promise<ReleaseResult>;
  /** Containers completed after `after` (0 = from the start of the proxy's ring), oldest first. */
  completedContainers(after: number): Promise<CompletedContainersPage>;
}

/** A YARN-side call failed; `retriable` is false for 4xx answers that will not get better. */
export class YarnCallError extends Error {
  constructor(message: string, readonly status?: number, readonly retriable = true) {
    super(message);
    this.name = 'YarnCallError';
  }
}
