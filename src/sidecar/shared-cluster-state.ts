/**
 * Cluster state read once per cluster, not once per job. What every sidecar of a cluster asks the
 * ResourceManager is mostly the same: the node counts by state (the safety cap's denominator) and
 * the node list (which blocked hosts are RUNNING). When many sidecars share one ZooKeeper store, one
 * of them — elected by ZooKeeper's leader-election recipe (store/zookeeper/election.ts) — reads
 * those from the RM and publishes them in znodes; the others read the znodes.
 *
 *   <base>/cluster-state/election/m-…   one ephemeral sequential znode per sidecar
 *   <base>/cluster-state/metrics        the leader's last /ws/v1/cluster/metrics reading
 *   <base>/cluster-state/nodes          the leader's last /ws/v1/cluster/nodes reading (gzip'd)
 *   <base>/cluster-state/nodes-filtered the leader's last filtered node list (?states=…, the
 *                                       detector's UNHEALTHY/LOST/DECOMMISSIONING), when it read one
 *
 * The engine does not know: it gets a ResourceManagerReader whose clusterMetrics() and nodes()
 * answer from the shared reading when it is fresh enough, and read the RM otherwise. So every
 * sidecar falls back to reading YARN itself whenever sharing does not work — the leader is gone
 * and nobody has taken over yet (its znode dies with its session, the next candidate takes over
 * within the session timeout), ZooKeeper is unreachable, or the reading is too old or unreadable.
 */
import { performance } from 'node:perf_hooks';
import { Clock } from '../core/clock';
import { Logger } from '../core/logger';
import { ZK, ZkSession, hasCode } from '../store/zookeeper/session';
import { ZkLeaderElection } from '../store/zookeeper/election';
import { SharedReading, ZkSharedReading } from '../store/zookeeper/shared-reading';
import { ClusterMetrics, ClusterNode, NODE_STATES, NodeState, ResourceManagerReader } from '../yarn/types';

export interface SharedClusterStateOptions {
  /** The real RM client. */
  rm: ResourceManagerReader;
  session: ZkSession;
  /** The store's base znode (<chroot><root>); everything here lives under <base>/cluster-state. */
  basePath: string;
  /** This sidecar, for logs and the published readings (application id, host). */
  member: string;
  clock: Clock;
  logger: Logger;
  operationTimeoutMs: number;
  /** How often the leader reads the node counts (yarn.refresh-interval). */
  metricsIntervalMs: number;
  /** How often the leader reads the node list (yarn.nodes.refresh-interval). */
  nodesIntervalMs: number;
}

/** RM calls this sidecar made, and answers it took from the leader instead. */
export interface SharedClusterStats {
  role: 'leader' | 'follower' | 'candidate';
  /** This sidecar's member znode in the election, in the current session (none while it joins). */
  memberNode: string | undefined;
  rmReads: { metrics: number; nodes: number; filtered: number };
  sharedAnswers: { metrics: number; nodes: number; filtered: number };
}

type Kind = 'metrics' | 'nodes' | 'filtered';

/** A filtered node list (?states=…) with the filter it answers, so another filter is never answered from it. */
interface Filtered {
  states: string;
  nodes: ClusterNode[];
}

const METRIC_FIELDS = ['activeNodes', 'decommissioningNodes', 'decommissionedNodes', 'lostNodes', 'unhealthyNodes', 'rebootedNodes', 'shutdownNodes', 'totalNodes'] as const;

export function decodeMetrics(v: unknown): ClusterMetrics {
  if (typeof v !== 'object' || v === null) throw new Error('metrics: not an object');
  const o = v as Record<string, unknown>;
  const out = {} as ClusterMetrics;
  for (const f of METRIC_FIELDS) {
    const n = o[f];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new Error(`metrics.${f}: not a count`);
    out[f] = n;
  }
  return out;
}

/** Nodes travel as rows [id, host, rack, state, numContainers, healthReport?]: ~40 % of the objects' JSON. */
type NodeRow = [string, string, string, NodeState, number, string?];

export function encodeNodes(nodes: readonly ClusterNode[]): NodeRow[] {
  return nodes.map((n) => (n.healthReport ? [n.id, n.host, n.rack, n.state, n.numContainers, n.healthReport] : [n.id, n.host, n.rack, n.state, n.numContainers]));
}

export function decodeNodes(v: unknown): ClusterNode[] {
  if (!Array.isArray(v)) throw new Error('nodes: not a list');
  return v.map((r: unknown, i) => {
    if (!Array.isArray(r) || r.length < 5) throw new Error(`nodes[${i}]: not a node row`);
    const [id, host, rack, state, numContainers, healthReport] = r as unknown[];
    if (typeof id !== 'string' || typeof host !== 'string' || host === '' || typeof rack !== 'string') throw new Error(`nodes[${i}]: bad id/host/rack`);
    if (typeof state !== 'string' || !(NODE_STATES as readonly string[]).includes(state)) throw new Error(`nodes[${i}]: bad state`);
    if (typeof numContainers !== 'number') throw new Error(`nodes[${i}]: bad numContainers`);
    return { id, host, rack, state: state as NodeState, numContainers, healthReport: typeof healthReport === 'string' ? healthReport : '' };
  });
}

function decodeFiltered(v: unknown): Filtered {
  if (typeof v !== 'object' || v === null || typeof (v as { states?: unknown }).states !== 'string') throw new Error('filtered nodes: no states');
  return { states: (v as { states: string }).states, nodes: decodeNodes((v as { nodes?: unknown }).nodes) };
}

export class SharedClusterState {
  readonly election: ZkLeaderElection;
  private readonly metricsZ: ZkSharedReading<ClusterMetrics>;
  private readonly nodesZ: ZkSharedReading<ClusterNode[]>;
  private readonly filteredZ: ZkSharedReading<Filtered>;
  private readonly counts = { rmReads: { metrics: 0, nodes: 0, filtered: 0 }, sharedAnswers: { metrics: 0, nodes: 0, filtered: 0 } };
  /** readAt of this sidecar's own last publish per kind (0 = none yet in this leadership). */
  private readonly published: Record<Kind, number> = { metrics: 0, nodes: 0, filtered: 0 };
  /** This sidecar's own last published readings (the leader answers from them). */
  private readonly last: { metrics?: SharedReading<ClusterMetrics>; nodes?: SharedReading<ClusterNode[]>; filtered?: SharedReading<Filtered> } = {};
  private cancelTimer: (() => void) | undefined;
  private running = false;
  private ticking = false;
  private readonly wantedPath: string;
  /** The reader the engine uses: shared answers when fresh, the RM otherwise. */
  readonly reader: ResourceManagerReader;

  constructor(private readonly opts: SharedClusterStateOptions) {
    const base = `${opts.basePath}/cluster-state`;
    const common = { session: opts.session, operationTimeoutMs: opts.operationTimeoutMs, logger: opts.logger };
    this.election = new ZkLeaderElection({ ...common, path: `${base}/election`, member: opts.member });
    this.metricsZ = new ZkSharedReading<ClusterMetrics>({ ...common, path: `${base}/metrics`, decode: decodeMetrics });
    this.nodesZ = new ZkSharedReading<ClusterNode[]>({ ...common, path: `${base}/nodes`, decode: decodeNodes, encode: encodeNodes });
    this.filteredZ = new ZkSharedReading<Filtered>({ ...common, path: `${base}/nodes-filtered`, decode: decodeFiltered, encode: (f) => ({ states: f.states, nodes: encodeNodes(f.nodes) }) });
    const rm = opts.rm;
    const single = rm.node?.bind(rm);
    this.reader = {
      clusterInfo: () => rm.clusterInfo(),
      application: (id) => rm.application(id),
      attempts: (id) => rm.attempts(id),
      containers: (id, attempt) => rm.containers(id, attempt),
      clusterMetrics: () => this.metrics(),
      // A filtered read (a few states: the detector's node health, every pass of every job's
      // detector) is shared too, at the node counts' pace; another filter than the one shared goes to the RM.
      nodes: (states, need) => (states && states.length ? this.filtered(states) : this.nodes(need?.hosts ?? [])),
      // One node is a kilobyte: not worth sharing.
      ...(single ? { node: single } : {}),
    };
    this.wantedPath = `${base}/nodes-wanted`;
    this.election.on('role', (role) => {
      if (role === 'leader') {
        this.watchWanted();
        this.published.metrics = 0;
        this.published.nodes = 0;
        this.published.filtered = 0;
        this.last.metrics = undefined;
        this.last.nodes = undefined;
        this.last.filtered = undefined;
        this.tick();
      }
    });
  }

  stats(): SharedClusterStats {
    return { role: this.election.role, memberNode: this.election.memberNode, rmReads: { ...this.counts.rmReads }, sharedAnswers: { ...this.counts.sharedAnswers } };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.election.start();
    this.arm();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.cancelTimer?.();
    this.metricsZ.close();
    this.nodesZ.close();
    this.filteredZ.close();
    await this.election.stop();
  }

  /** Followers accept a reading up to two leader intervals old (one missed read is tolerated). */
  private fresh<T>(r: SharedReading<T> | undefined, intervalMs: number): r is SharedReading<T> {
    return r !== undefined && this.opts.clock.now() - r.readAt <= 2 * intervalMs;
  }

  private async metrics(): Promise<ClusterMetrics> {
    return (await this.shared('metrics', this.metricsZ, this.opts.metricsIntervalMs, () => this.opts.rm.clusterMetrics())).value;
  }

  /**
   * The node list, read from the RM only when a sidecar of the cluster needs it (its first node
   * item, a host not seen, nodes joined: their refreshes read single nodes themselves). A shared
   * list that lacks a host the caller needs is not good enough unless it was read within
   * yarn.refresh-interval, which already says the RM does not know the host. A follower whose
   * shared list is missing, stale or short asks the leader for a fresh one (one RM read for every
   * sidecar of the cluster, however many ask) and reads the RM itself only when no new reading
   * comes within twice the operation timeout.
   */
  private async nodes(needHosts: readonly string[]): Promise<ClusterNode[]> {
    const read = (): Promise<ClusterNode[]> => this.opts.rm.nodes();
    if (this.election.isLeader) {
      const got = await this.shared('nodes', this.nodesZ, this.opts.nodesIntervalMs, read);
      return this.covers(got, needHosts) ? got.value : (await this.readAndPublish('nodes', this.nodesZ, read)).value;
    }
    const r = await this.nodesZ.latest().catch(() => undefined);
    if (this.fresh(r, this.opts.nodesIntervalMs) && this.covers(r, needHosts)) {
      this.counts.sharedAnswers.nodes++;
      return r.value;
    }
    return this.nodesFromLeader();
  }

  /** Whether a reading answers for `needHosts`: it has them all, or it is too young for the RM to know more. */
  private covers(got: SharedReading<ClusterNode[]>, needHosts: readonly string[]): boolean {
    if (needHosts.length === 0 || this.opts.clock.now() - got.readAt < this.opts.metricsIntervalMs) return true;
    const hosts = new Set(got.value.map((n) => n.host));
    return needHosts.every((h) => hosts.has(h));
  }

  /** A follower's fresh node list: asked of the leader (watchWanted), read from the RM itself when none comes in time. */
  private async nodesFromLeader(): Promise<ClusterNode[]> {
    const asked = this.opts.clock.now();
    try {
      await this.requestNodes(asked);
      // The leader's read of a big list (and its publish) can take a few seconds on a busy RM. A
      // wait on ZooKeeper and the RM, timed as ZooKeeper's own operations are (monotonic, real):
      // on the injected clock it would never end where that clock stands still.
      const until = performance.now() + 2 * this.opts.operationTimeoutMs;
      while (performance.now() < until) {
        const r = await this.nodesZ.latest();
        if (r && r.readAt >= asked) {
          this.counts.sharedAnswers.nodes++;
          return r.value;
        }
        await new Promise<void>((resolve) => setTimeout(resolve, 100).unref());
      }
    } catch (e) {
      this.opts.logger.debug(`shared cluster state: asking the leader for a fresh node list failed (${(e as Error).message})`);
    }
    return (await this.readAndPublish('nodes', this.nodesZ, () => this.opts.rm.nodes())).value;
  }

  /**
   * A filtered node list: the shared one when it is fresh and answers the same filter (the leader
   * publishes what it reads for its own detector), else the RM's. Not refreshed by the leader's
   * timer: a cluster where the leader's detector is off reads it as before, each sidecar itself.
   */
  private async filtered(states: readonly NodeState[]): Promise<ClusterNode[]> {
    const key = [...states].sort().join(',');
    const read = async (): Promise<Filtered> => ({ states: key, nodes: await this.opts.rm.nodes(states) });
    const got = await this.shared('filtered', this.filteredZ, this.opts.metricsIntervalMs, read);
    if (got.value.states === key) return got.value.nodes;
    return (await this.readAndPublish('filtered', this.filteredZ, read)).value.nodes;
  }

  /** A follower's request for a fresh node list: the leader watches this znode. */
  private async requestNodes(at: number): Promise<void> {
    const data = Buffer.from(JSON.stringify({ by: this.opts.member, at }));
    const t = this.opts.operationTimeoutMs;
    try {
      await this.opts.session.multi([{ op: 'set', path: this.wantedPath, data, version: -1 }], t);
    } catch (e) {
      if (!hasCode(e, ZK.NO_NODE)) throw e;
      await this.opts.session.create(this.wantedPath, data, t).catch((e2: unknown) => {
        if (!hasCode(e2, ZK.NODE_EXISTS)) throw e2;
      });
    }
  }

  /** While leading: a follower's request re-reads the node list (at most once per refresh-interval). */
  private watchWanted(): void {
    if (!this.running || !this.election.isLeader) return;
    this.opts.session
      .exists(this.wantedPath, this.opts.operationTimeoutMs, () => {
        this.watchWanted();
        const last = this.published.nodes;
        if (this.election.isLeader && this.opts.clock.now() - last >= this.opts.metricsIntervalMs) {
          this.readAndPublish('nodes', this.nodesZ, () => this.opts.rm.nodes()).catch((e: unknown) =>
            this.opts.logger.warn(`shared cluster state: node list asked for by a follower: ${(e as Error).message}`),
          );
        }
      })
      .catch(() => {
        // ZooKeeper unreachable: the next leadership (or session) arms it again; followers fall back.
      });
  }

  private async shared<T>(kind: Kind, z: ZkSharedReading<T>, intervalMs: number, read: () => Promise<T>): Promise<SharedReading<T>> {
    if (this.election.isLeader) {
      // The leader answers from its own last reading while it is younger than the interval: its
      // engine asking more often than that costs the RM nothing more.
      const mine = this.last[kind] as SharedReading<T> | undefined;
      if (mine && this.opts.clock.now() - mine.readAt < intervalMs) {
        this.counts.sharedAnswers[kind]++;
        return mine;
      }
    } else {
      try {
        const r = await z.latest();
        if (this.fresh(r, intervalMs)) {
          this.counts.sharedAnswers[kind]++;
          return r;
        }
      } catch (e) {
        this.opts.logger.debug(`shared cluster state: cannot read ${z.path} (${(e as Error).message}); reading the RM`);
      }
    }
    return this.readAndPublish(kind, z, read);
  }

  private async readAndPublish<T>(kind: Kind, z: ZkSharedReading<T>, read: () => Promise<T>): Promise<SharedReading<T>> {
    const readAt = this.opts.clock.now();
    const value = await read();
    this.counts.rmReads[kind]++;
    if (this.election.isLeader) {
      const ok = await z.publish({ value, readAt, by: this.opts.member }).catch((e: unknown) => {
        this.opts.logger.warn(`shared cluster state: publishing ${z.path} failed: ${(e as Error).message}`);
        return false;
      });
      if (ok) {
        this.published[kind] = readAt;
        this.last[kind] = { value, readAt, by: this.opts.member } as SharedReading<ClusterMetrics> & SharedReading<ClusterNode[]> & SharedReading<Filtered>;
      }
    }
    return { value, readAt, by: this.opts.member };
  }

  private arm(): void {
    if (!this.running) return;
    this.cancelTimer = this.opts.clock.setTimer(Math.min(this.opts.metricsIntervalMs, this.opts.nodesIntervalMs), () => this.tick());
  }

  /** The leader keeps the node counts fresh for everyone, whatever its own engine needs (the node list: on request). */
  private tick(): void {
    if (!this.running || this.ticking) return;
    this.ticking = true;
    this.refreshAsLeader()
      .catch((e: unknown) => this.opts.logger.warn(`shared cluster state: leader read failed: ${(e as Error).message}`))
      .finally(() => {
        this.ticking = false;
        this.cancelTimer?.();
        this.arm();
      });
  }

  private async refreshAsLeader(): Promise<void> {
    if (!this.election.isLeader) return;
    if (await this.due('metrics', this.metricsZ, this.opts.metricsIntervalMs)) await this.readAndPublish('metrics', this.metricsZ, () => this.opts.rm.clusterMetrics());
  }

  /**
   * Whether the leader should read now: its own last publish, or — just after taking over — the
   * previous leader's, is an interval old (a takeover does not re-read what is still fresh).
   */
  private async due<T>(kind: Kind, z: ZkSharedReading<T>, intervalMs: number): Promise<boolean> {
    let last = this.published[kind];
    if (last === 0) last = (await z.latest().catch(() => undefined))?.readAt ?? 0;
    return this.opts.clock.now() - last >= intervalMs;
  }
}
