/**
 * Watches the cluster as the RM reports it, in two caches with their own read policies
 * (read-policy.ts), because the RM is shared by every job and its node list is its heaviest answer
 * (megabytes at 10,000 nodes):
 *
 *  - the node counts (/ws/v1/cluster/metrics, ~1 KB): the safety cap's denominator (activeNodes);
 *  - the node list: which blocked hosts are RUNNING (and the console's node picture), read only
 *    while node items are in force — at the first one, for a host the last list lacked, and every
 *    yarn.nodes.refresh-interval.
 *
 * A stale value beats none: a failed read keeps the old one with a warning; only a sidecar that
 * needs the list (node items in force) and has never read one fails the pass.
 */
import { Logger } from '../core/logger';
import { ClusterMetrics, ResourceManagerReader } from '../yarn/types';
import { NodeView } from './desired';
import { Cached, READ_OK, ReadOutcome, message } from './cache';
import { NeedsNow, NodeListState, ReadIntervals, countsDue, nodeListDueFor, nodeListMayNeedHosts, unseenHosts } from './read-policy';

export class NodesWatcher {
  /** The policy lives in read-policy.ts; the cache only holds the value and its age. */
  readonly cache = new Cached<NodeView[]>("the cluster's nodes", { kind: 'on-demand' });
  readonly counts = new Cached<ClusterMetrics>("the cluster's node counts", { kind: 'on-demand' });
  private hosts: ReadonlySet<string> = new Set();
  private missing: ReadonlySet<string> = new Set();
  /** Reads done, by what (for tests and the bench). */
  readonly reads = { nodes: 0, counts: 0 };

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
        const read = await this.deps.rm.nodes(undefined, list.unseen.length ? { hosts: list.unseen } : undefined);
        this.reads.nodes++;
        this.cache.set(
          read.map((n) => ({ host: n.host, state: n.state, rack: n.rack })),
          now,
        );
        this.hosts = new Set(read.map((n) => n.host));
        this.missing = new Set(need.nodeHosts().filter((h) => !this.hosts.has(h)));
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
