/**
 * Watches the cluster as the RM reports it, in two caches with their own read policies
 * (read-policy.ts), because the RM is shared by every job and its node list is its heaviest answer
 * (megabytes at 10,000 nodes):
 *
 *  - the node counts (/ws/v1/cluster/metrics, ~1 KB): the safety cap's denominator (activeNodes);
 *  - the node list: which blocked hosts are RUNNING (and the console's node picture), read only
 *    while node items are in force — at the first one, for a host the last list lacked, and every
 *    yarn.nodes.refresh-interval. After the first read the needed nodes are asked for one by one
 *    when that can answer (read-policy.ts nodeReadPlan): 11 blocked hosts cost the RM ~10 KB per
 *    refresh instead of the whole list (6.8 MB at 10,000 simulated nodes).
 *
 * A stale value beats none: a failed read keeps the old one with a warning; only a sidecar that
 * needs the list (node items in force) and has never read one fails the pass.
 */
import { Logger } from '../core/logger';
import { ClusterMetrics, ClusterNode, ResourceManagerReader, YarnCallError } from '../yarn/types';
import { NodeView } from './desired';
import { Cached, READ_OK, ReadOutcome, message } from './cache';
import { NodeIndex, indexNodes } from './known-hosts';
import { NeedsNow, NodeIds, NodeListState, ReadIntervals, countsDue, nodeListDueFor, nodeListMayNeedHosts, nodeReadPlan, unseenHosts } from './read-policy';

/** Single-node reads in flight at once: a few, so a refresh of 100 nodes is quick without a burst at the RM. */
const SINGLE_READS_AT_ONCE = 4;

/** The node list as the watcher keeps it: by NodeId, in the RM's order, with what single reads need. */
interface NodeTable {
  byId: ReadonlyMap<string, ClusterNode>;
  ids: NodeIds;
}

export class NodesWatcher {
  /** The policy lives in read-policy.ts; the cache only holds the value and its age. */
  readonly cache = new Cached<NodeView[]>("the cluster's nodes", { kind: 'on-demand' });
  readonly counts = new Cached<ClusterMetrics>("the cluster's node counts", { kind: 'on-demand' });
  private hosts: ReadonlySet<string> = new Set();
  /** The list as last read, indexed (the API's unknown hosts, the metrics' racks). */
  known: NodeIndex | undefined;
  private missing: ReadonlySet<string> = new Set();
  /** Reads done, by what (for tests and the bench): whole lists, single nodes, counts. */
  readonly reads = { nodes: 0, singles: 0, counts: 0 };
  private table: NodeTable = { byId: new Map(), ids: { ids: new Map(), racks: new Map() } };
  /** The RM's node total (clusterMetrics) when the last full list was read: more now means nodes joined. */
  private totalAtList: number | undefined;

  constructor(
    private readonly deps: { rm: ResourceManagerReader; logger: Logger },
    private readonly intervals: ReadIntervals,
  ) {}

  /** Whether a node list was ever read (without one, every blocked host counts as RUNNING). */
  get listKnown(): boolean {
    return this.cache.readAt !== undefined;
  }

  /** RUNNING nodes as last counted by the RM, when known. */
  get runningNodes(): number | undefined {
    return this.counts.value?.activeNodes;
  }

  /** One due read: the whole list, or the needed nodes one by one when that can answer (nodeReadPlan). */
  private async read(reason: Parameters<typeof nodeReadPlan>[0], unseen: readonly string[], need: Pick<NeedsNow, 'nodeHosts'>, now: number): Promise<void> {
    const total = this.counts.value?.totalNodes;
    const joined = total !== undefined && this.totalAtList !== undefined && total > this.totalAtList;
    const plan = this.deps.rm.node ? nodeReadPlan(reason, need.nodeHosts(), unseen, this.table.ids, joined) : ({ how: 'full' } as const);
    if (plan.how === 'single') {
      try {
        return this.keep(tableOf(await this.withSingles(plan.ids)), need, now);
      } catch (e) {
        // Refused for good (a NodeId the client cannot ask for, an RM answering 4xx): the whole list answers instead.
        if (!(e instanceof YarnCallError) || e.retriable) throw e;
      }
    }
    const read = await this.deps.rm.nodes(undefined, unseen.length ? { hosts: [...unseen] } : undefined);
    this.reads.nodes++;
    this.totalAtList = Math.max(total ?? 0, read.filter((n) => n.state !== 'NEW').length);
    this.keep(tableOf(read), need, now);
  }

  /** The last list with the named nodes read again. */
  private async withSingles(ids: readonly string[]): Promise<ClusterNode[]> {
    const byId = new Map(this.table.byId);
    for (const [id, node] of await this.singles(ids)) {
      if (node) byId.set(id, node);
      else byId.delete(id); // the RM no longer knows it (or a guessed NodeId that is not one)
    }
    return [...byId.values()];
  }

  /** The named nodes, a few requests at a time; undefined for one the RM does not know. Any failure fails all. */
  private async singles(ids: readonly string[]): Promise<[string, ClusterNode | undefined][]> {
    const node = this.deps.rm.node?.bind(this.deps.rm);
    if (!node) throw new Error('this RM reader cannot read single nodes');
    const out: [string, ClusterNode | undefined][] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < ids.length) {
        const id = ids[next++];
        out.push([id, await node(id)]);
        this.reads.singles++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(SINGLE_READS_AT_ONCE, ids.length) }, worker));
    return out;
  }

  private keep(t: NodeTable, need: Pick<NeedsNow, 'nodeHosts'>, now: number): void {
    this.table = t;
    const nodes = [...t.byId.values()];
    const views = nodes.map((n) => ({ host: n.host, state: n.state, rack: n.rack }));
    this.cache.set(views, now);
    this.known = indexNodes(views);
    this.hosts = new Set(nodes.map((n) => n.host));
    this.missing = new Set(need.nodeHosts().filter((h) => !this.hosts.has(h)));
  }

  /** Whether a poll tick should ask for a pass to refresh either cache. */
  stale(now: number, need: Pick<NeedsNow, 'nodeCount' | 'nodeHosts'>): boolean {
    return countsDue(this.counts.readAt, now, need.nodeCount > 0, this.intervals).due || this.listDue(need, now).due;
  }

  /**
   * The node list's read decision. The needed hosts are listed, and the unseen ones found, only
   * when the decision can depend on them (nodeListMayNeedHosts); which are unseen is kept for the
   * same needs array and the same list: the poll asks every tick, and with 100,000 node items the
   * scan is tens of milliseconds of event loop (NeedsMemo keeps the array while nothing changed).
   */
  private listDue(need: Pick<NeedsNow, 'nodeCount' | 'nodeHosts'>, now: number): ReturnType<typeof nodeListDueFor> {
    const s: NodeListState = { readAt: this.cache.readAt, hosts: this.hosts, missing: this.missing };
    if (need.nodeCount === 0 || !nodeListMayNeedHosts(s.readAt, now, this.intervals)) return { due: false, unseen: [] };
    const neededHosts = need.nodeHosts();
    const m = this.unseen;
    const u = m && m.needed === neededHosts && m.hosts === this.hosts && m.missing === this.missing ? m.u : unseenHosts(s, neededHosts);
    this.unseen = { needed: neededHosts, hosts: this.hosts, missing: this.missing, u };
    return nodeListDueFor(s, u, now, this.intervals);
  }

  private unseen: { needed: readonly string[]; hosts: ReadonlySet<string>; missing: ReadonlySet<string>; u: ReturnType<typeof unseenHosts> } | undefined;

  /** `need`: the node items in force now and their hosts (none: nothing needs the list). */
  async refresh(now: number, need: Pick<NeedsNow, 'nodeCount' | 'nodeHosts'>): Promise<ReadOutcome> {
    const inForce = need.nodeCount > 0;
    const list = this.listDue(need, now);
    if (list.due) {
      try {
        await this.read(list.reason === 'first' ? 'first' : list.reason, list.unseen, need, now);
      } catch (e) {
        const readAt = this.cache.readAt;
        if (readAt !== undefined) this.deps.logger.warn(`reading the cluster's nodes failed, using the list from ${new Date(readAt).toISOString()}: ${message(e)}`);
        else if (this.counts.readAt === undefined) return { ok: false, error: `cannot read the cluster's nodes for the safety cap: ${message(e)}` };
        // Counts known, list never read (an RM outage began while nothing was blocked): every
        // blocked host takes a slot of the cap until the list can be read — never more blocked
        // than the cap allows.
        else this.deps.logger.warn(`cannot read the cluster's nodes (${message(e)}): every blocked host counts as RUNNING for the safety cap until the list can be read`);
      }
    }
    if (countsDue(this.counts.readAt, now, inForce, this.intervals).due) {
      try {
        this.counts.set(await this.deps.rm.clusterMetrics(), now);
        this.reads.counts++;
      } catch (e) {
        const readAt = this.counts.readAt;
        // The RM must have answered once before anything is pushed: no counts and no list → fail.
        if (readAt === undefined && this.cache.readAt === undefined) return { ok: false, error: `cannot read the cluster's nodes for the safety cap: ${message(e)}` };
        this.deps.logger.warn(`reading the cluster's node counts failed${readAt !== undefined ? `, using those from ${new Date(readAt).toISOString()}` : ', counting the RUNNING nodes of the list'}: ${message(e)}`);
      }
    }
    return READ_OK;
  }
}

/** A node list indexed for single reads: by NodeId, the NodeIds of each host, the hosts of each rack, the common port. */
function tableOf(nodes: readonly ClusterNode[]): NodeTable {
  const byId = new Map<string, ClusterNode>();
  const ids = new Map<string, string[]>();
  const racks = new Map<string, string[]>();
  const ports = new Set<string>();
  for (const n of nodes) {
    byId.set(n.id, n);
    const forHost = ids.get(n.host);
    if (forHost) forHost.push(n.id);
    else ids.set(n.host, [n.id]);
    if (n.rack) {
      const r = racks.get(n.rack);
      if (r) r.push(n.host);
      else racks.set(n.rack, [n.host]);
    }
    const port = /:(\d+)$/.exec(n.id)?.[1];
    ports.add(port ?? '');
  }
  const [only] = ports;
  return { byId, ids: { ids, racks, ...(ports.size === 1 && only !== '' ? { commonPort: only } : {}) } };
}
