/**
 * When the engine reads what from YARN: pure rules, one per observed cache, unit-tested on a fake
 * clock. The RM is shared by every job of the cluster, so a read happens only when its answer is
 * needed (an idle sidecar with nothing blocked costs the RM next to nothing):
 *
 *  - node counts (/ws/v1/cluster/metrics, ~1 KB): the safety cap's denominator. Every
 *    yarn.refresh-interval while node items are in force; otherwise only every
 *    yarn.nodes.refresh-interval (for /status);
 *  - node list (/ws/v1/cluster/nodes, megabytes at 10,000 nodes): which blocked hosts are RUNNING.
 *    Read only while node items are in force: first when one appears, again when an item names a
 *    host the last list did not have (at most once per yarn.refresh-interval: a list read since
 *    that lacks the host already says the RM does not know it), and every yarn.nodes.refresh-interval.
 *    After the first, a read asks for the needed nodes one by one (/ws/v1/cluster/nodes/{nodeid},
 *    ~1-2 KB each) instead of the whole list whenever that can answer (nodeReadPlan);
 *  - the application's containers (from the AMRM proxy, local to the AM): every pass while an
 *    evacuation is in progress, every yarn.refresh-interval while any node or task manager item is in
 *    force (GET /blocklist shows their task managers), never when nothing is blocked.
 */
import { BlockedItem, EVACUATE } from '../model/item';
import { appliesTo, isEffective } from '../model/effective';

export type ReadReason = 'first' | 'unseen-host' | 'refresh' | 'evacuating' | 'idle-refresh';

export type ReadDecision = { due: false } | { due: true; reason: ReadReason };

const NOT_DUE: Readonly<ReadDecision> = { due: false };
const due = (reason: ReadReason): ReadDecision => ({ due: true, reason });

export interface ReadIntervals {
  /** yarn.refresh-interval (default 10 s). */
  refreshMs: number;
  /** yarn.nodes.refresh-interval (default 10 min). */
  nodesRefreshMs: number;
}

/** The node counts: the cap needs them fresh only while node items are in force. */
export function countsDue(readAt: number | undefined, now: number, nodeItemsInForce: boolean, p: ReadIntervals): ReadDecision {
  if (readAt === undefined) return due('first');
  if (nodeItemsInForce) return now - readAt >= p.refreshMs ? due('refresh') : NOT_DUE;
  return now - readAt >= p.nodesRefreshMs ? due('idle-refresh') : NOT_DUE;
}

export interface NodeListState {
  /** When the cached list was read (undefined: never). */
  readAt: number | undefined;
  /** Hosts on the cached list. */
  hosts: ReadonlySet<string>;
  /**
   * Hosts that were needed when the list was read and were not on it: the RM did not know them
   * then. They are looked up again only at the rare refresh (a blocked host that does not exist
   * must not make every refresh-interval a node-list read).
   */
  missing?: ReadonlySet<string>;
}

/**
 * The node list. `needed` are the hosts of node items in force now. Returns the hosts missing from
 * the list too, so the caller can pass them to the reader (a shared reading lacking them is not good
 * enough).
 */
export function nodeListDue(s: NodeListState, needed: Iterable<string>, now: number, p: ReadIntervals): ReadDecision & { unseen: string[] } {
  return nodeListDueFor(s, unseenHosts(s, needed), now, p);
}

/** The needed hosts neither on the list nor known to be missing from it; `any`: anything is needed. */
export function unseenHosts(s: NodeListState, needed: Iterable<string>): { unseen: string[]; any: boolean } {
  const unseen: string[] = [];
  let any = false;
  for (const h of needed) {
    any = true;
    if (!s.hosts.has(h) && !s.missing?.has(h)) unseen.push(h);
  }
  return { unseen, any };
}

/**
 * Whether the node list's decision can depend on which needed hosts are unseen: when it was never
 * read, or is old enough for an unseen host (or the rare refresh) to make it due. Otherwise it is
 * not due whatever the hosts, and they need not be listed at all.
 */
export function nodeListMayNeedHosts(readAt: number | undefined, now: number, p: ReadIntervals): boolean {
  return readAt === undefined || now - readAt >= Math.min(p.refreshMs, p.nodesRefreshMs);
}

/** nodeListDue with the unseen hosts already known (unseenHosts of the same state and needs). */
export function nodeListDueFor(s: NodeListState, u: { unseen: string[]; any: boolean }, now: number, p: ReadIntervals): ReadDecision & { unseen: string[] } {
  const { unseen, any } = u;
  if (!any) return { due: false, unseen };
  if (s.readAt === undefined) return { due: true, reason: 'first', unseen };
  const age = now - s.readAt;
  if (unseen.length > 0 && age >= p.refreshMs) return { due: true, reason: 'unseen-host', unseen };
  if (age >= p.nodesRefreshMs) return { due: true, reason: 'refresh', unseen };
  return { due: false, unseen };
}

/** Most single-node reads (GET /ws/v1/cluster/nodes/{nodeid}) one read makes; past it the whole list is cheaper to ask for. */
export const MAX_SINGLE_READS = 100;

/** What the last full node list says about where each node is: enough to ask the RM for single nodes. */
export interface NodeIds {
  /** The NodeIds (host:port) of each host on the list (several NodeManagers may share a host). */
  ids: ReadonlyMap<string, readonly string[]>;
  /** The hosts of each rack path on the list. */
  racks: ReadonlyMap<string, readonly string[]>;
  /** The port every NodeId on the list has, when they all share one (a fixed yarn.nodemanager.address): a host's likely NodeId. */
  commonPort?: string;
}

/** How a due node-list read is made: the whole list, or the named nodes one by one. */
export type NodeReadPlan = { how: 'full' } | { how: 'single'; ids: string[] };

/**
 * How to make a due read of the nodes (#31.8): the whole list (megabytes at 10,000 nodes) only when
 * nothing smaller can answer — the first read, a host whose NodeId cannot be known, more nodes than
 * MAX_SINGLE_READS, or nodes joined the cluster (`joined`: the RM counts more nodes than the list
 * had) while a host is missing or a rack is blocked (either may be among them). Otherwise the RM is
 * asked for each needed node: a blocked host's nodes, a blocked rack's nodes, and a missing host at
 * the cluster's common port. A missing host whose NodeId cannot be guessed is looked for again only
 * by a full read.
 */
export function nodeReadPlan(reason: ReadReason, needed: readonly string[], unseen: readonly string[], known: NodeIds, joined: boolean): NodeReadPlan {
  if (reason === 'first' || known.ids.size === 0) return { how: 'full' };
  const unseenSet = new Set(unseen);
  const ids = new Set<string>();
  let racks = false;
  let missing = false;
  for (const h of needed) {
    const rack = known.racks.get(h);
    if (rack) racks = true;
    for (const host of rack ?? [h]) for (const id of known.ids.get(host) ?? []) ids.add(id);
    if (rack || known.ids.has(h)) continue;
    missing = true;
    if (known.commonPort !== undefined) ids.add(`${h}:${known.commonPort}`);
    else if (unseenSet.has(h)) return { how: 'full' };
  }
  if (joined && (missing || racks)) return { how: 'full' };
  if (ids.size > MAX_SINGLE_READS) return { how: 'full' };
  return { how: 'single', ids: [...ids] };
}

/** The application's containers, from the proxy. */
export function containersDue(readAt: number | undefined, now: number, w: { evacuating: boolean; itemsInForce: boolean }, p: ReadIntervals): ReadDecision {
  if (w.evacuating) return due('evacuating');
  if (!w.itemsInForce) return NOT_DUE;
  if (readAt === undefined) return due('first');
  return now - readAt >= p.refreshMs ? due('refresh') : NOT_DUE;
}

/**
 * The RM's view of the application's attempts (its scheduler-side blacklist, for a new attempt's
 * explicit removals): at start and when the proxy serves another attempt, never on a timer.
 */
export function rmAttemptsDue(lastReadForAttempt: string | undefined, currentAttempt: string | undefined): boolean {
  return currentAttempt !== undefined ? lastReadForAttempt !== currentAttempt : lastReadForAttempt === undefined;
}

/** What the items in force for this application need read: the hosts of node items, and whether any item counts. */
export function needs(items: Iterable<BlockedItem>, applicationId: string | undefined, now: number): { nodeHosts: string[]; any: boolean } {
  const n = needsUntil(items, applicationId, now).value;
  return { nodeHosts: [...n.nodeHosts()], any: n.any };
}

/** needs() of one snapshot at one instant, from NeedsMemo: the hosts are listed only when asked for. */
export interface NeedsNow {
  /** Any item of this application in force. */
  any: boolean;
  /** Node and rack items in force. */
  nodeCount: number;
  /** Any EVACUATE item in force (the pass then needs the app's containers every time). */
  evacuating: boolean;
  /**
   * Their hosts (a rack's path), in the snapshot's order; made on the first call and kept. Only a
   * node-list decision that can depend on them asks (nodeListMayNeedHosts): under a stream of
   * writes a pass runs every few tens of milliseconds, and listing 50,000 hosts each time was a
   * tenth of what a pass allocated.
   */
  nodeHosts(): readonly string[];
}

/** needsUntil() and the first instant after `now` when its answer can change by itself (an item's end). */
function needsUntil(items: Iterable<BlockedItem>, applicationId: string | undefined, now: number): { value: NeedsNow; until: number } {
  const inForce = (i: BlockedItem) => appliesTo(i, applicationId) && isEffective(i, now);
  // A rack item needs the list too (its nodes count against the cap and are evacuated): its
  // path is never a host on the list, so it reads like an unseen host — once, then each interval.
  const onList = (i: BlockedItem) => i.kind === 'node' || i.kind === 'rack';
  let any = false;
  let evacuating = false;
  let nodeCount = 0;
  let until = Infinity;
  for (const i of items) {
    if (!inForce(i)) continue;
    any = true;
    if (i.endTimestamp < until) until = i.endTimestamp;
    if (onList(i)) nodeCount++;
    if (i.action === EVACUATE) evacuating = true;
  }
  let hosts: string[] | undefined;
  const nodeHosts = (): readonly string[] => {
    if (hosts) return hosts;
    // No set needed: a node's and a rack's id is its host (or path), and ids are unique in a store.
    hosts = [];
    for (const i of items) if (onList(i) && inForce(i)) hosts.push(i.node);
    return hosts;
  };
  return { value: { any, nodeCount, evacuating, nodeHosts }, until };
}

/**
 * needs() of one snapshot, kept while nothing it depends on moves: the same items array (a store
 * snapshot is replaced, never changed in place), the same application, and the clock within
 * [then, the first end of an item in force). The poll asks every tick; with 100,000 items the
 * scan and its host set cost tens of milliseconds of event loop each time.
 */
export class NeedsMemo {
  private last: { items: readonly BlockedItem[]; applicationId: string | undefined; from: number; until: number; value: NeedsNow } | undefined;

  get(items: readonly BlockedItem[], applicationId: string | undefined, now: number): NeedsNow {
    const l = this.last;
    if (l && l.items === items && l.applicationId === applicationId && now >= l.from && now < l.until) return l.value;
    const { value, until } = needsUntil(items, applicationId, now);
    this.last = { items, applicationId, from: now, until, value };
    return value;
  }
}
