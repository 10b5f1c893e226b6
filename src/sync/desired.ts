/**
 * The desired blacklist, pure: which effective items this application enforces now, which the
 * safety cap holds back, and the difference against what YARN has. No I/O, so every rule here is
 * unit-tested directly.
 */
import { BlockedItem } from '../model/item';
import { appliesTo, isEffective } from '../model/effective';
import { AgeOrder, effectiveOldestFirst } from './age-order';
import { SortedHosts, isSorted, sortedDifference } from './sorted-hosts';
import { NodeState } from '../yarn/types';

/** What the cap needs to know about one cluster node. */
export interface NodeView {
  host: string;
  state: NodeState;
  /** The RM's rack path (e.g. /default-rack): a rack item covers the nodes that name it. */
  rack?: string;
}

export interface DesiredInput {
  /** Walked twice (the effective set, then the blacklist in this order): an array, not a one-shot iterable. */
  items: readonly BlockedItem[];
  applicationId: string | undefined;
  now: number;
  /** The cluster's nodes as the RM reports them (any state). */
  nodes: readonly NodeView[];
  /** max-blocked-fraction: at most floor(fraction × RUNNING nodes) RUNNING hosts are blacklisted. */
  maxBlockedFraction: number;
  /**
   * A lower bound for the cap's denominator: the most RUNNING nodes seen recently. A node list that
   * dips (an RM restart while NodeManagers re-register, a truncated answer) must not shrink the
   * cap and lift blocks that were rightly enforced a moment ago.
   */
  runningNodesFloor?: number;
  /**
   * RUNNING nodes as the RM counts them (/ws/v1/cluster/metrics activeNodes, ~1 KB), fresher than
   * the node list, which is read rarely; absent = the RUNNING nodes of `nodes`. The list still says
   * which blocked hosts are RUNNING (a host not on it takes no slot).
   */
  runningNodes?: number;
  /** No node list yet (an RM outage): every blocked host counts as RUNNING, so the cap still holds. */
  assumeRunning?: boolean;
}

export interface DesiredPlan {
  /** Every item that counts for this application now (node and task manager), oldest first. */
  readonly effective: readonly BlockedItem[];
  /** Node items on the blacklist, oldest first. */
  readonly enforced: readonly BlockedItem[];
  /** Node items held back by the safety cap, oldest first. */
  readonly deferred: readonly BlockedItem[];
  /** Task manager items: never on the blacklist (that would block the whole node). */
  readonly taskManagers: readonly BlockedItem[];
  /** The hosts YARN should have on the blacklist, sorted. */
  readonly blacklist: readonly string[];
  /** RUNNING nodes in the cluster now (the cap's denominator unless runningNodesFloor is larger). */
  readonly runningNodes: number;
  /** How many RUNNING hosts the cap allows on the blacklist. */
  readonly capacity: number;
  /** The cap's denominator: RUNNING nodes now, or the remembered floor when that is larger. */
  readonly capNodes: number;
  /** RUNNING hosts this plan puts on the blacklist (the slots of the cap in use). */
  readonly capUsed: number;
  /** The RUNNING hosts holding those slots. */
  readonly slotHolders: ReadonlySet<string>;
  /** The RUNNING hosts of the node list, which take a slot when blocked; undefined while no list is known (every host takes one). */
  readonly runningHosts: ReadonlySet<string> | undefined;
  /** `blacklist` as a set (its own sorted array behind a set's interface): made with the plan, which never changes. */
  readonly blacklistSet: SortedHosts;
  /** Lookups a reader builds once per plan and keeps with it (the API's index of its items by id). */
  readonly lookups: { byId?: Map<string, number> };
}

/**
 * What the decision step remembers to save work, as a value the caller owns, passes in and gets
 * back (memory.ts keeps it): the last plan and what it was made of, the last diff, the last age
 * order. The answers never depend on it: the same inputs give the same plan and diff with an
 * empty one, only slower (two engines in one process each keep their own).
 */
export interface DecisionMemo {
  plan?: { input: DesiredInput; from: number; until: number; plan: DesiredPlan };
  diff?: { want: ReadonlySet<string>; have: ReadonlySet<string>; repushAll: boolean; diff: BlacklistDiff; origin: DiffOrigin | undefined };
  ageOrder?: AgeOrder;
}

/** The two plan sets a diff was computed between: applied to `have`, the diff gives exactly `want`. */
export interface DiffOrigin {
  want: SortedHosts;
  have: SortedHosts;
}

/** RUNNING hosts per rack path. */
export function runningByRack(nodes: readonly NodeView[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const n of nodes) {
    if (n.state !== 'RUNNING' || !n.rack) continue;
    const list = out.get(n.rack);
    if (list) list.push(n.host);
    else out.set(n.rack, [n.host]);
  }
  return out;
}

/** Every host per rack path, any state (what a rack's evacuation covers). */
export function hostsByRack(nodes: readonly NodeView[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const n of nodes) {
    if (!n.rack) continue;
    const list = out.get(n.rack);
    if (list) list.push(n.host);
    else out.set(n.rack, [n.host]);
  }
  return out;
}

/** floor(fraction × running), tolerant of binary fractions (0.3 × 10 = 3.0000000000000004). */
export function fractionShare(fraction: number, runningNodes: number): number {
  if (runningNodes <= 0 || fraction <= 0) return 0;
  return Math.max(0, Math.floor(fraction * runningNodes + 1e-9));
}

/**
 * How many RUNNING hosts may be blacklisted: the fraction's share, but at least one while another
 * RUNNING node stays free. An operator's block of one node on a small cluster (0.33 × 3 rounds to
 * 0) is a decision, not a runaway; the cap exists against mass blacklisting. A fraction of 0 is
 * an explicit "never", and the only node of a cluster is never taken (the job would have nowhere
 * to run). docs/architecture.md, decisions.
 */
export function blockCapacity(fraction: number, runningNodes: number): number {
  const share = fractionShare(fraction, runningNodes);
  return share === 0 && fraction > 0 && runningNodes >= 2 ? 1 : share;
}

/** The hosts (one node's, or a rack's) that would take a slot of `plan`'s cap besides those in use. */
export function newSlots(plan: DesiredPlan, hosts: readonly string[]): string[] {
  return [...new Set(hosts)].filter((h) => (plan.runningHosts?.has(h) ?? true) && !plan.slotHolders.has(h));
}

/**
 * Desired state at `now`:
 *  - effective = items in scope (cluster or this app) with now < endTimestamp;
 *  - node items are walked oldest first (FLIP "oldest kept"): an item on a RUNNING host takes one
 *    slot of the cap, and once the slots are gone later ones are deferred;
 *  - an item on a host that is not RUNNING (LOST, DECOMMISSIONED, unknown to the RM) takes no
 *    slot and is always enforced: blacklisting it removes no capacity, and counting unknown hosts
 *    is what made MapReduce's cap misfire (its blacklist-disable percentage counts every NodeManager
 *    of the cluster, running or not).
 */
export function planDesired(input: DesiredInput): DesiredPlan {
  return planWith(input, {}).plan;
}

/**
 * planDesired(input) with what an earlier call remembered: the same snapshot, nodes and numbers
 * within the plan's validity give the very same plan. Every pass plans, and most passes (a poll
 * tick's refresh of the node counts, a push of nothing) plan the same snapshot again: with 100,000
 * items that is two sorts of 100,000 (by age, and the hosts) on the event loop each time. A
 * snapshot is replaced, never changed in place, and plans are only read.
 */
export function planWith(input: DesiredInput, memo: DecisionMemo): { plan: DesiredPlan; memo: DecisionMemo } {
  const l = memo.plan;
  if (l && samePlanInput(l.input, input) && input.now >= l.from && input.now < l.until) return { plan: l.plan, memo };
  const order = effectiveOldestFirst(input.items, input.applicationId, input.now, memo.ageOrder);
  const plan = computePlan(input, order.effective);
  // The plan holds until the first end of an item in it (expiry is the only way time changes it).
  let until = Infinity;
  for (const i of plan.effective) if (i.endTimestamp < until) until = i.endTimestamp;
  return { plan, memo: { ...memo, ageOrder: order, plan: { input: { ...input }, from: input.now, until, plan } } };
}

function samePlanInput(a: DesiredInput, b: DesiredInput): boolean {
  return (
    a.items === b.items &&
    a.applicationId === b.applicationId &&
    a.nodes === b.nodes &&
    a.maxBlockedFraction === b.maxBlockedFraction &&
    a.runningNodesFloor === b.runningNodesFloor &&
    a.runningNodes === b.runningNodes &&
    a.assumeRunning === b.assumeRunning
  );
}

function computePlan(input: DesiredInput, effective: BlockedItem[]): DesiredPlan {
  const running = new Set<string>();
  for (const n of input.nodes) if (n.state === 'RUNNING') running.add(n.host);
  const runningNow = input.runningNodes ?? running.size;
  const capNodes = Math.max(runningNow, input.runningNodesFloor ?? 0);
  const capacity = blockCapacity(input.maxBlockedFraction, capNodes);

  // Enforced items are the effective ones minus those held back and the task managers, in the same
  // order. Until the first item that is not enforced the list would be a copy of a prefix of
  // `effective`, so it is made only then; with none (the common case) the plan shares `effective`
  // rather than keeping two lists of every item in force (a pass per 100 ms under a stream, and
  // each list outlives the young generation).
  let enforced: BlockedItem[] | undefined;
  const deferred: BlockedItem[] = [];
  const taskManagers: BlockedItem[] = [];
  const rackRunning = runningByRack(input.nodes);
  // RUNNING hosts already holding a slot: a node inside a blocked rack is not counted twice.
  const counted = new Set<string>();
  let used = 0;
  for (let i = 0; i < effective.length; i++) {
    const item = effective[i];
    let on: boolean;
    if (item.kind === 'taskmanager') {
      taskManagers.push(item);
      on = false;
    } else if (item.kind === 'node') {
      // One host: it takes a slot when it is RUNNING (or no list says otherwise) and not counted yet.
      const h = item.node;
      if (!(input.assumeRunning || running.has(h)) || counted.has(h)) on = true;
      else if (used + 1 <= capacity) {
        on = true;
        used++;
        counted.add(h);
      } else on = false;
      if (!on) deferred.push(item);
    } else {
      // A rack takes one slot per RUNNING node it covers, all or none (YARN takes the rack whole).
      // Without a node list (assumeRunning) every blocked host counts, and a rack at least once.
      const hosts = rackRunning.get(item.id) ?? (input.assumeRunning ? [item.id] : []);
      const fresh = hosts.filter((h) => !counted.has(h));
      if (fresh.length === 0) on = true;
      else if (used + fresh.length <= capacity) {
        on = true;
        used += fresh.length;
        for (const h of fresh) counted.add(h);
      } else on = false;
      if (!on) deferred.push(item);
    }
    if (on) enforced?.push(item);
    else enforced ??= effective.slice(0, i);
  }
  const blacklist = blacklistOf(input, deferred);
  const runningHosts = input.assumeRunning ? undefined : running;
  return { effective, enforced: enforced ?? effective, deferred, taskManagers, blacklist, blacklistSet: new SortedHosts(blacklist), runningNodes: runningNow, capacity, capNodes, capUsed: used, slotHolders: counted, runningHosts, lookups: {} };
}

/**
 * The enforced hosts, sorted and unique. Built in the order the items came in (the store lists
 * them by id, and a node's or rack's id is its host), so they usually come out strictly
 * increasing already: that is checked on the way (one comparison per host) and then neither sort
 * nor de-duplication runs; otherwise (a store that lists in another order) both do.
 */
function blacklistOf(input: DesiredInput, deferred: readonly BlockedItem[]): string[] {
  const held = deferred.length > 0 ? new Set<BlockedItem>(deferred) : undefined;
  const hosts: string[] = [];
  let increasing = true;
  // The same test as effectiveItems: in scope and not ended.
  for (const item of input.items) {
    if (item.kind === 'taskmanager' || !appliesTo(item, input.applicationId) || !isEffective(item, input.now) || held?.has(item)) continue;
    const h = item.node;
    if (increasing && hosts.length > 0 && !(hosts[hosts.length - 1] < h)) increasing = false;
    hosts.push(h);
  }
  if (increasing) return hosts;
  hosts.sort();
  let n = 0;
  for (let i = 0; i < hosts.length; i++) if (i === 0 || hosts[i] !== hosts[i - 1]) hosts[n++] = hosts[i];
  hosts.length = n;
  return hosts;
}

export interface BlacklistDiff {
  additions: string[];
  removals: string[];
}

/**
 * additions = desired − actual, removals = (actual ∪ maybeOnYarn) − desired, both sorted. With
 * `repushAll` (a new application attempt, whose AMRMClient starts empty) every desired host is sent
 * again; adding a host YARN already has is harmless. `maybeOnYarn` are hosts YARN may honour
 * although the proxy does not list them: they are only ever removal candidates, never a reason to
 * skip an addition. A host never lands in both lists.
 */
export function diffBlacklist(desired: Iterable<string>, actual: Iterable<string>, repushAll = false, maybeOnYarn: Iterable<string> = []): BlacklistDiff {
  return diffWith(desired, actual, repushAll, maybeOnYarn, {}).diff;
}

/**
 * diffBlacklist() with what the last call remembered: the same two sets again (a plan's set, the
 * belief about the proxy: neither changed in place) give the same answer without walking
 * 2 × 100,000 hosts on the event loop once more. Between two plan sets it also names them as the
 * diff's origin, so the check that a push turned the believed set into the plan's (appliedIs) is
 * answered without walking either set (50,000 hosts after every push under a stream of writes).
 */
export function diffWith(desired: Iterable<string>, actual: Iterable<string>, repushAll: boolean, maybeOnYarn: Iterable<string>, memo: DecisionMemo): { diff: BlacklistDiff; origin: DiffOrigin | undefined; memo: DecisionMemo } {
  // Sets are used as they are: a pass hands in thousands of hosts, and copies were most of its cost.
  const want = asSet(desired);
  const have = asSet(actual);
  const maybe = [...maybeOnYarn];
  const keep = maybe.length === 0 && want instanceof SortedHosts && actual === have;
  const l = memo.diff;
  if (keep && l && l.want === want && l.have === have && l.repushAll === repushAll) return { diff: l.diff, origin: l.origin, memo };
  const diff = diffOf(want, have, repushAll, maybe);
  const origin = want instanceof SortedHosts && have instanceof SortedHosts ? { want, have } : undefined;
  const next: DecisionMemo = { ...memo };
  if (keep) next.diff = { want, have, repushAll, diff, origin };
  else delete next.diff;
  return { diff, origin, memo: next };
}

/** Whether `origin` says its diff was computed from exactly `from` towards exactly `to` (two plan sets). */
export function diffLeadsFrom(origin: DiffOrigin | undefined, from: ReadonlySet<string>, to: ReadonlySet<string>): boolean {
  return origin !== undefined && origin.have === from && origin.want === to;
}

/** The plan's blacklist as a set (a plan made by hand, in a test, gets one on the spot). */
export function blacklistSet(plan: DesiredPlan): SortedHosts {
  return plan.blacklistSet ?? new SortedHosts(plan.blacklist);
}

function diffOf(want: ReadonlySet<string>, have: ReadonlySet<string>, repushAll: boolean, maybeOnYarn: readonly string[]): BlacklistDiff {
  let additions: string[];
  let removals: string[];
  if (isSorted(want) && isSorted(have)) {
    // The plan against the belief after the last push (the previous plan): one merge walk.
    const d = sortedDifference(want.hosts, have.hosts, repushAll);
    additions = d.onlyA;
    removals = d.onlyB;
  } else {
    additions = [];
    for (const h of want) if (repushAll || !have.has(h)) additions.push(h);
    removals = [];
    for (const h of have) if (!want.has(h)) removals.push(h);
    additions.sort();
    removals.sort();
  }
  const extra = new Set<string>();
  for (const h of maybeOnYarn) if (!want.has(h) && !have.has(h)) extra.add(h);
  if (extra.size > 0) {
    removals.push(...extra);
    removals.sort();
  }
  return { additions, removals };
}

function asSet(hosts: Iterable<string>): ReadonlySet<string> {
  return hosts instanceof Set || hosts instanceof SortedHosts ? (hosts as ReadonlySet<string>) : new Set(hosts);
}

export function isEmptyDiff(d: BlacklistDiff): boolean {
  return d.additions.length === 0 && d.removals.length === 0;
}
