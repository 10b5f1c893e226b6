/**
 * Words for the API and the CLI: turns the sync engine's data (SyncView) into the per-item sync
 * state of GET /blocklist and the body of GET /status. The engine decides nothing here and this
 * file decides nothing about YARN; it only says what the last pass found.
 */
import { BlockedItem, EVACUATE } from '../model/item';
import { appliesTo, isExpired } from '../model/effective';
import { DesiredPlan, fractionShare, newSlots } from '../sync/desired';
import { EvacuationStatus, isTaskManager, markBlockedStatus, withCountdown } from '../sync/evacuation';
import { NodeNaming, SyncView } from '../sync/view';
import { SyncFacade, SyncProgress } from '../sync/sync-port';
import { AppContainer, NodeState } from '../yarn/types';
import { nearestHosts } from '../model/nearest';
import { FlinkStatus, flinkStatus } from './flink-status';
import type { ClockSkew } from '../store/store';

/** Per-item enforcement state, as `blocklist list` shows it. */
export type SyncState = 'applied' | 'pending' | 'deferred' | 'evacuating' | 'evacuated' | 'disabled' | 'not-applicable' | 'unknown-host';

export interface ItemSyncStatus {
  state: SyncState;
  /** Why deferred / pending, in words. */
  detail?: string;
  evacuation?: EvacuationStatus;
  /** unknown-host: the names the RM knows that are nearest to the item's host, nearest first. */
  nearest?: readonly string[];
}

/** The answer for a host with no near name, one array for all of them (100,000 unknown hosts: 3 MB of empty arrays otherwise). Never changed. */
const NO_NEAREST: readonly string[] = [];

/**
 * A node item whose host the RM's node list (as last read) does not hold: YARN matches blacklist
 * entries against node names exactly, so it blocks nothing until a node of that name joins. The
 * entry is still pushed (a node can be blocked before it joins, as YARN allows). Undefined when the
 * host is known, or no node list has been read (then nothing can be said).
 */
export function unknownHostStatus(view: SyncView, item: BlockedItem): ItemSyncStatus | undefined {
  const known = item.kind === 'node' ? view.nodes?.known : undefined;
  if (!known || known.hosts.has(item.node)) return undefined;
  // Kept with the node list they were found in (GET /blocklist asks for every item).
  let nearest = known.nearest.get(item.node);
  if (!nearest) {
    const found = nearestHosts(item.node, known.hosts);
    nearest = found.length === 0 ? NO_NEAREST : found;
    known.nearest.set(item.node, nearest);
  }
  const readAt = view.nodes ? new Date(view.nodes.readAt).toISOString() : '?';
  const hint = nearest.length ? `; nearest names it knows: ${nearest.join(', ')}` : '';
  return {
    state: 'unknown-host',
    detail: `the RM lists no node '${item.node}' (node list of ${readAt}): YARN ignores the entry until a node of that name joins${hint}`,
    nearest,
  };
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

export interface StatusOptions {
  /** Include the cluster's nodes as last read (megabytes on a big cluster: only when asked). */
  nodes?: boolean;
  /** The engine's passes right now, and how long they may run or fail before the sync counts as stalled (0: never). */
  progress?: SyncProgress;
  stallLimitMs?: number;
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
    desired: readonly string[];
    actual: string[];
    /** Each owner's hosts on the AM's blacklist as last read from the proxy (this sidecar writes as its configured owner). */
    owners?: Record<string, string[]>;
    /** How the entries pushed to YARN name nodes (host, or each NodeManager's host:port), and why (yarn.include-port-in-node-name). */
    entries?: NodeNaming['entries'];
    entriesWhy?: string;
  };
  pending: { additions: string[]; removals: string[]; releases: string[] };
  deferred: string[];
  evacuations: EvacuationStatus[];
  /** Absent until a pass has read the cluster's nodes. */
  safetyCap?: SafetyCapStatus;
  /** Only when asked for (`GET /status?nodes=true`). */
  nodes?: { readAt: number; list: NodeSummary[] };
  /** The job's Flink JobManager as evacuations last read it (absent without a sync engine). */
  flink?: FlinkStatus;
  /** A reconcile pass is running, since then (epoch ms). */
  passRunningSince?: number;
  /** Every pass has failed since then (epoch ms). */
  failingSince?: number;
  /** Why YARN is not being brought up to date (past cluster.resource-blocklist.sync.stall-limit): /readyz answers 503 with it. */
  stalled?: string;
}

/**
 * Why the sync counts as stalled at `now`, in words; undefined while it is not. A pass that runs past
 * the limit waits on a peer beyond its calls' deadlines' worth; passes failing that long leave YARN behind.
 */
export function syncStall(progress: SyncProgress | undefined, view: SyncView, now: number, limitMs: number): string | undefined {
  if (!progress || limitMs <= 0) return undefined;
  const since = (t: number): string => `${Math.round((now - t) / 1000)} s (since ${new Date(t).toISOString()})`;
  if (progress.passRunningSince !== undefined && now - progress.passRunningSince > limitMs) {
    return `a reconcile pass has been running for ${since(progress.passRunningSince)}, past cluster.resource-blocklist.sync.stall-limit (${Math.round(limitMs / 1000)} s): a peer is answering too slowly`;
  }
  if (progress.failingSince !== undefined && now - progress.failingSince > limitMs) {
    const err = lastError(view);
    return `every reconcile pass has failed for ${since(progress.failingSince)}, past cluster.resource-blocklist.sync.stall-limit (${Math.round(limitMs / 1000)} s)${err ? `: ${err}` : ''}`;
  }
  return undefined;
}

/** Flink's REST API for evacuations: not used, not readable now, or read (where, which version, can it take a triggered checkpoint). */
export const DISABLED_STATUS: Readonly<ItemSyncStatus> = { state: 'disabled', detail: 'cluster.resource-blocklist.enabled is false' };

const PLAN_LISTS = ['enforced', 'deferred', 'taskManagers'] as const;
type PlanList = (typeof PLAN_LISTS)[number];

// GET /blocklist asks once per item: each plan and snapshot is indexed once (the index kept with
// it, in its `lookups`), not scanned per call. A plan's index maps an id to its place, position × 3
// + list: a small integer, no object per entry (half the memory of an object per entry, held as
// long as the plan is the current one).
function planEntry(plan: DesiredPlan, id: string): { list: PlanList; item: BlockedItem } | undefined {
  // A plan made by hand (a test) has no lookups: indexed for this call only.
  const lookups = plan.lookups ?? {};
  let index = lookups.byId;
  if (!index) {
    const built = new Map<string, number>();
    PLAN_LISTS.forEach((list, l) => plan[list].forEach((item, i) => built.set(item.id, i * PLAN_LISTS.length + l)));
    lookups.byId = index = built;
  }
  const at = index.get(id);
  if (at === undefined) return undefined;
  const list = PLAN_LISTS[at % PLAN_LISTS.length];
  return { list, item: plan[list][Math.floor(at / PLAN_LISTS.length)] };
}

function storedItem(view: SyncView, items: readonly BlockedItem[], id: string): BlockedItem | undefined {
  const lookups = view.itemLookups ?? {};
  let index = lookups.byId;
  if (!index) lookups.byId = index = new Map(items.map((i) => [i.id, i]));
  return index.get(id);
}

const lastError = (v: SyncView): string | undefined => (v.lastFailure ? `${v.lastFailure.stage}: ${v.lastFailure.error}` : undefined);

/**
 * The live task managers an item covers (its `taskManagers`): a node item's on its host; a task
 * manager item's own container while it runs on the named node. Without an engine nothing is
 * known about containers, so a task manager item lists the container it names.
 */
export function itemTaskManagers(sync: SyncFacade, item: BlockedItem): string[] {
  if (item.kind === 'node') return sync.taskManagersOn(item.node);
  if (item.kind === 'rack') {
    const hosts = (sync.view().nodes?.list ?? []).filter((n) => n.rack === item.id).map((n) => n.host);
    return hosts.flatMap((h) => sync.taskManagersOn(h)).sort();
  }
  if (item.containerId === undefined) return [];
  if (!sync.view().engine) return [item.containerId];
  return sync.taskManagersOn(item.node).includes(item.containerId) ? [item.containerId] : [];
}

/** Before any plan: the state every item has (undefined: no engine, items carry no sync state). */
function withoutPlan(view: SyncView): ItemSyncStatus | undefined {
  if (!view.enabled) return DISABLED_STATUS;
  if (!view.engine) return undefined;
  return view.plan ? undefined : { state: 'pending', detail: 'no reconcile pass has completed yet' };
}

/**
 * The sync state of an item the write being answered has just created: no plan made before can
 * hold it, so neither the plan nor the engine's snapshot is looked up. Each lookup indexes the whole
 * plan or snapshot once per pass, which a stream of new blocks would pay for at every pass (at
 * 30,000 items two Maps of 30,000 entries, ten times a second on the event loop) for an answer
 * known already: pending, unless the item is out of scope or already over.
 */
export function createdItemSyncStatus(view: SyncView, item: BlockedItem, now: number, claimed?: Set<string>): ItemSyncStatus | undefined {
  if (!view.enabled || !view.engine || !view.plan) return withoutPlan(view);
  const status = unplanned(view, item, now, 'not yet seen by the sync engine');
  if (status.state !== 'pending' || item.kind === 'taskmanager') return status;
  return capHolds(view, view.plan, item, claimed) ? { state: 'deferred', detail: capDetail(view.plan, view.maxBlockedFraction) } : status;
}

/**
 * Whether the cap as of the last pass holds back a node or rack item just created: it is the
 * youngest (oldest kept), so it goes on only if the slots still free cover its RUNNING hosts.
 * `claimed` are the hosts earlier new items of the same answer (a batch) took.
 */
function capHolds(view: SyncView, plan: DesiredPlan, item: BlockedItem, claimed: Set<string> | undefined): boolean {
  const hosts = item.kind === 'rack' ? rackHosts(view, plan, item.id) : [item.node];
  const need = newSlots(plan, claimed ? hosts.filter((h) => !claimed.has(h)) : hosts);
  if (need.length === 0) return false;
  if (plan.capUsed + (claimed?.size ?? 0) + need.length > plan.capacity) return true;
  for (const h of need) claimed?.add(h);
  return false;
}

/** A rack's RUNNING hosts as the last pass saw them; without a node list the rack counts once, by its path. */
function rackHosts(view: SyncView, plan: DesiredPlan, rack: string): string[] {
  if (plan.runningHosts === undefined) return [rack];
  return (view.nodes?.list ?? []).filter((n) => n.rack === rack && n.state === 'RUNNING').map((n) => n.host);
}

/** Why the cap holds an item back, with the numbers the pass used. */
export function capDetail(plan: DesiredPlan, fraction: number): string {
  const n = plan.capNodes;
  if (fraction <= 0) return 'held back by the safety cap: max-blocked-fraction is 0, so no RUNNING node is ever blacklisted';
  if (plan.capacity === 0 && n <= 0) return 'held back by the safety cap: the RM reports no RUNNING node, so none may be blacklisted';
  if (plan.capacity === 0) return 'held back by the safety cap: the cluster has 1 RUNNING node, and the last one is never blacklisted (the job would have nowhere to run)';
  const rounded = fractionShare(fraction, n) < plan.capacity ? `; ${fraction} × ${n} rounds to 0, and one node may always be blocked while another stays free` : '';
  return `held back by the safety cap: ${plan.capUsed} of at most ${plan.capacity} of ${n} RUNNING nodes are blacklisted already (max-blocked-fraction ${fraction}${rounded}); older items are kept, unblock one to make room`;
}

/** An item's sync state; undefined when no engine runs (API only: items carry no sync state). */
export function itemSyncStatus(view: SyncView, id: string, now: number): ItemSyncStatus | undefined {
  const plan = view.plan;
  if (!view.enabled || !view.engine || !plan) return withoutPlan(view);
  const where = planEntry(plan, id);
  const unknown = where && where.list !== 'taskManagers' ? unknownHostStatus(view, where.item) : undefined;
  if (unknown) return unknown;
  if (where?.list === 'deferred') {
    return { state: 'deferred', detail: capDetail(plan, view.maxBlockedFraction) };
  }
  const evac = view.evacuations.get(id);
  const evacuation = evac ? { state: evac.phase === 'READY' ? ('evacuated' as const) : ('evacuating' as const), evacuation: withCountdown(evac, now) } : undefined;
  if (where?.list === 'enforced') {
    if (!view.actual?.has(where.item.node)) return { state: 'pending', detail: "not yet on YARN's blacklist (the push is pending or being retried)" };
    return evacuation ?? markedStatus(view, where.item) ?? { state: 'applied' };
  }
  if (where?.list === 'taskManagers') {
    if (evac?.runsOn !== undefined) {
      const cid = where.item.containerId ?? '';
      return { state: 'not-applicable', detail: `container ${cid} runs on ${evac.runsOn}, not on ${where.item.node}: nothing is released (block ${evac.runsOn}/${cid} to evacuate it)`, evacuation: withCountdown(evac, now) };
    }
    if (evacuation) return evacuation;
    // A pass plans first and evaluates evacuations once it has the containers: in between, an
    // EVACUATE task manager is on its way, not out of scope (a follower would otherwise give up on it).
    if (where.item.action === EVACUATE) return { state: 'pending', detail: 'the evacuation of its container is being evaluated' };
    return markedTaskManagerStatus(view, where.item);
  }
  return notInPlan(view, id, now);
}

/** A MARK_BLOCKED node or rack in force: applied, with what became of the job's idle task managers there. */
function markedStatus(view: SyncView, item: BlockedItem): ItemSyncStatus | undefined {
  const evacuation = idleRelease(view, item);
  return evacuation ? { state: 'applied', evacuation } : undefined;
}

/** A MARK_BLOCKED task manager item: YARN's blacklist is not touched; its container goes once idle (with Flink's word on it). */
function markedTaskManagerStatus(view: SyncView, item: BlockedItem): ItemSyncStatus {
  const noBlacklist = "a task manager block does not touch YARN's blacklist (that would block the whole node)";
  const evacuation = idleRelease(view, item);
  const flink = view.flink;
  if (!flink || flink.kind === 'off') return { state: 'not-applicable', detail: `${noBlacklist}; ${flink?.kind === 'off' ? flink.why : "Flink's REST API is not used"}, so whether it is idle cannot be told and it is not released`, ...(evacuation ? { evacuation } : {}) };
  if (!evacuation) return { state: 'applied', detail: `${noBlacklist}; its container is not running on ${item.node} (gone, or not started yet)` };
  const done = evacuation.phase === 'READY' ? 'released once idle' : evacuation.phase === 'RELEASING' ? 'released (idle): YARN is letting it go' : 'released once idle';
  return { state: 'applied', detail: `${noBlacklist}; its container is ${done}`, evacuation };
}

/** The task managers a MARK_BLOCKED item covers, as the last pass saw them, and its idle-release status. */
function idleRelease(view: SyncView, item: BlockedItem): EvacuationStatus | undefined {
  const containers = view.containers;
  if (!containers) return undefined;
  const released = view.released ?? new Map<string, string>();
  const live = (c: AppContainer) => isTaskManager(c, view.amContainerId) && !released.has(c.containerId);
  let hosts: ReadonlySet<string>;
  let onPlace: string[];
  if (item.kind === 'taskmanager') {
    const c = item.containerId !== undefined ? containers.byId.get(item.containerId) : undefined;
    hosts = new Set([item.node]);
    onPlace = c && c.host === item.node && live(c) ? [c.containerId] : [];
  } else {
    hosts = new Set(item.kind === 'rack' ? (view.nodes?.list ?? []).filter((n) => n.rack === item.id).map((n) => n.host) : [item.node]);
    onPlace = [...hosts].flatMap((h) => (containers.byHost.get(h) ?? []).filter(live).map((c) => c.containerId));
  }
  const releasedThere: string[] = [];
  for (const [id, host] of released) if (item.kind === 'taskmanager' ? id === item.containerId : hosts.has(host)) releasedThere.push(id);
  return markBlockedStatus(item, onPlace, releasedThere, { ...(view.flink ? { flink: view.flink } : {}), ...(view.taskManagerWaits ? { waits: view.taskManagerWaits } : {}), stillListed: (id) => containers.byId.has(id), since: item.startTimestamp });
}

/** An item the last plan does not hold: not seen yet, out of scope, expired, or read but not yet reconciled. */
function notInPlan(view: SyncView, id: string, now: number): ItemSyncStatus {
  const item = view.items ? storedItem(view, view.items, id) : undefined;
  if (!item) return { state: 'pending', detail: 'not yet seen by the sync engine' };
  return unplanned(view, item, now, 'not yet reconciled');
}

/** An item no plan holds yet: out of scope, over, or pending (`detail` unless a pass failed: then why). */
function unplanned(view: SyncView, item: BlockedItem, now: number, detail: string): ItemSyncStatus {
  if (!appliesTo(item, view.applicationId)) return { state: 'not-applicable', detail: `scoped to ${item.scope}, not this application` };
  if (isExpired(item, now)) return { state: 'not-applicable', detail: 'expired (the expiry job deletes it from the store)' };
  // Not yet through a pass that reached YARN (e.g. the proxy is down).
  const err = lastError(view);
  return { state: 'pending', detail: err ? `not yet applied: ${err}` : detail };
}

/** The body of GET /status. */
export function sidecarStatus(view: SyncView, now: number, opts: StatusOptions = {}): SidecarStatus {
  const s: SidecarStatus = {
    enabled: view.enabled,
    storeDegraded: view.storeError !== undefined,
    blacklist: { desired: view.plan?.blacklist ?? [], actual: view.actual ? [...view.actual].sort() : [] },
    pending: { additions: view.pending.additions, removals: view.pending.removals, releases: [...view.pendingReleases] },
    deferred: view.plan?.deferred.map((i) => i.id) ?? [],
    evacuations: [...view.evacuations.values()].map((e) => withCountdown(e, now)),
  };
  if (view.applicationId !== undefined) s.applicationId = view.applicationId;
  if (view.appAttemptId !== undefined) s.appAttemptId = view.appAttemptId;
  if (view.lastSuccessfulSync !== undefined) s.lastSuccessfulSync = view.lastSuccessfulSync;
  const err = view.storeError !== undefined ? `store unreachable, enforcing the last good snapshot: ${view.storeError}` : lastError(view);
  if (err !== undefined) s.lastError = err;
  if (view.nodeNaming) Object.assign(s.blacklist, { entries: view.nodeNaming.entries, entriesWhy: view.nodeNaming.why });
  if (view.owners && Object.keys(view.owners).length) s.blacklist.owners = Object.fromEntries(Object.entries(view.owners).map(([o, h]) => [o, [...h]]));
  const plan = view.plan;
  if (plan) s.safetyCap = { blockedRunningNodes: plan.capUsed, runningNodes: plan.capNodes, limit: plan.capacity, maxBlockedFraction: view.maxBlockedFraction };
  const p = opts.progress;
  if (p?.passRunningSince !== undefined) s.passRunningSince = p.passRunningSince;
  if (p?.failingSince !== undefined) s.failingSince = p.failingSince;
  const stalled = syncStall(p, view, now, opts.stallLimitMs ?? 0);
  if (stalled !== undefined) s.stalled = stalled;
  if (view.flink) s.flink = flinkStatus(view.flink, view.flinkReadAt, now);
  if (opts.nodes && view.nodes) s.nodes = { readAt: view.nodes.readAt, list: view.nodes.list.map((n) => (n.rack !== undefined ? { host: n.host, rack: n.rack, state: n.state } : { host: n.host, state: n.state })) };
  return s;
}

/** GET /status's `clockSkew`: this sidecar's clock against the store's time (store/zookeeper/clock.ts). */
export interface ClockSkewStatus {
  state: 'agrees' | 'ahead' | 'behind' | 'not-measured' | 'no-reference';
  /** The local clock minus the store's, ms (positive: ahead). */
  skewMs?: number;
  uncertaintyMs?: number;
  limitMs?: number;
  /** Epoch ms (local) of the last measurement. */
  measuredAt?: number;
  detail: string;
}

/** `shared`: whether the store has a time of its own (ZooKeeper); `skew` its last reading. */
export function clockSkewStatus(shared: boolean, skew: ClockSkew | undefined): ClockSkewStatus {
  if (!shared) return { state: 'no-reference', detail: "the store is this sidecar's alone (SQLite): items count on its clock, and a step of that clock moves every end with it" };
  if (!skew) return { state: 'not-measured', detail: "the store's time has not been measured yet (ZooKeeper unreachable?): expiry waits for it" };
  const { skewMs, uncertaintyMs, limitMs, measuredAt } = skew;
  const figures = { skewMs: Math.round(skewMs), uncertaintyMs: Math.round(uncertaintyMs), limitMs, measuredAt };
  if (Math.abs(skewMs) <= limitMs) return { state: 'agrees', ...figures, detail: `within ${limitMs} ms of the store's time` };
  if (skewMs > 0) {
    return { state: 'ahead', ...figures, detail: "ahead of the store's time beyond the limit: expiry of shared items is refused, and items count until their end on the store's time; fix this machine's clock (NTP)" };
  }
  return { state: 'behind', ...figures, detail: "behind the store's time beyond the limit: blocks made through this sidecar are stamped on its clock, so the other jobs see them end early; fix this machine's clock (NTP)" };
}
