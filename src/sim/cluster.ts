/**
 * The simulated YARN cluster: nodes, one Flink application and its containers and attempts, and a
 * scheduler that honours the application's blacklist. No HTTP here (server.ts and the *-routes.ts
 * files serve it). The blacklist itself (both sides of the AMRM protocol, several owners) is
 * am-blacklist.ts; what the AM sees complete is completed-ring.ts; where a round places is
 * placement.ts; the live containers and their ids are container-registry.ts.
 *
 * What it copies from YARN, and from where:
 *  - On allocate the scheduler takes the pending blacklist delta, then places containers. Only
 *    RUNNING nodes take new containers (DECOMMISSIONING nodes keep theirs but get no new ones;
 *    GracefulDecommission.md).
 *  - Node loss: LOST, UNHEALTHY, DECOMMISSIONED, SHUTDOWN, REBOOTED remove the node from the
 *    scheduler and its containers are lost (RMNodeImpl sends NodeRemovedSchedulerEvent).
 *  - Flink's ResourceManager keeps the wanted number of task managers: a released, killed or lost
 *    container is requested again and placed on the next allocation round (an AM heartbeat).
 *  - A new attempt keeps the task-manager containers (Flink sets keep-containers-across-application-
 *    attempts); the blacklist of the new attempt is chosen by `newAttemptBlacklist` (am-blacklist.ts).
 *
 * Everything is indexed by host (no O(nodes × containers) work); one allocation round is
 * O(nodes + containers placed).
 */
import { Clock, every, systemClock } from '../core/clock';
import { formatApplicationId, formatAttemptId } from '../model/ids';
import { NodeState, NODE_STATES, ReleaseResult } from '../yarn/types';
import { Random, seededRandom, shuffle } from './random';
import { NewAttemptBlacklist } from './options';
import { AmBlacklist, BlacklistUpdateResult, DEFAULT_BLACKLIST_OWNER } from './am-blacklist';
import { CompletedPage, CompletedRing, EXIT_ABORTED, EXIT_KILLED_EXCEEDED_PMEM, LOST_CONTAINER, RELEASED_CONTAINER, defaultDiagnostics } from './completed-ring';
import { ClusterOptions, SimAttempt, SimContainer, SimNode } from './cluster-types';
import { SimCounters, emptyCounters } from './counters';
import { spreadOver } from './placement';
import { buildNodes } from './topology';
import { ContainerRegistry } from './container-registry';

// The blacklist modes of a new attempt (am-blacklist.ts, AmBlacklist#newAttempt), for the routes.
export { NEW_ATTEMPT_BLACKLIST_MODES } from './options';
export type { NewAttemptBlacklist } from './options';

/** NodeStates in which a node keeps its containers. */
const KEEPS_CONTAINERS: ReadonlySet<NodeState> = new Set<NodeState>(['RUNNING', 'DECOMMISSIONING']);

export class SimCluster {
  readonly clock: Clock;
  readonly nodes: SimNode[] = [];
  readonly clusterTimestamp: number;
  readonly applicationId: string;
  readonly slotsPerNode: number;
  readonly startedOn: number;
  newAttemptBlacklist: NewAttemptBlacklist;
  keepContainersAcrossAttempts: boolean;
  /** Wanted number of task-manager containers (Flink's required workers). */
  target: number;
  counters: SimCounters = emptyCounters();

  private readonly byHost = new Map<string, SimNode>();
  private readonly byNodeId = new Map<string, SimNode>();
  private readonly containers: ContainerRegistry;
  private readonly attemptList: SimAttempt[] = [];
  private readonly rng: Random;
  private readonly appNumber: number;
  private readonly blacklist = new AmBlacklist();
  private readonly completed: CompletedRing;
  private stopTicking: (() => void) | undefined;

  constructor(opts: ClusterOptions) {
    if (!Number.isInteger(opts.nodes) || opts.nodes < 1) throw new Error('nodes must be a positive integer');
    if (!Number.isInteger(opts.containers) || opts.containers < 0) throw new Error('containers must be a non-negative integer');
    this.clock = opts.clock ?? systemClock;
    this.rng = seededRandom(opts.seed ?? 1);
    this.clusterTimestamp = opts.clusterTimestamp ?? 1_652_313_600_000;
    this.appNumber = opts.appNumber ?? 1;
    this.applicationId = formatApplicationId({ clusterTimestamp: String(this.clusterTimestamp), id: this.appNumber });
    this.keepContainersAcrossAttempts = opts.keepContainersAcrossAttempts ?? true;
    // As a real RM does (Hadoop 3.5.0, test/real/yarn-sidecar.test.ts): with keep-containers the
    // scheduler hands the new attempt the old blacklist while the new AM's client starts empty.
    this.newAttemptBlacklist = opts.newAttemptBlacklist ?? (this.keepContainersAcrossAttempts ? 'scheduler-only' : 'empty');
    this.target = opts.containers;
    this.slotsPerNode = opts.slotsPerNode ?? Math.max(4, Math.ceil((2 * opts.containers) / opts.nodes));
    this.startedOn = this.clock.now();
    this.completed = new CompletedRing(opts.completedRingSize ?? 1024);

    this.containers = new ContainerRegistry({ clusterTimestamp: String(this.clusterTimestamp), id: this.appNumber }, opts.epoch, this.clock, (h) => this.byHost.get(h));
    for (const node of buildNodes(opts.nodes, opts.racks, this.startedOn)) {
      this.nodes.push(node);
      this.byHost.set(node.host, node);
      this.byNodeId.set(node.nodeId, node);
    }
    this.startAttempt();
    this.allocate();
  }

  // ---- reading -------------------------------------------------------------------------------

  node(host: string): SimNode | undefined {
    return this.byHost.get(host);
  }

  nodeById(nodeId: string): SimNode | undefined {
    return this.byNodeId.get(nodeId);
  }

  container(id: string): SimContainer | undefined {
    return this.containers.get(id);
  }

  /** Live containers of the application (the AM's included). */
  liveContainers(): SimContainer[] {
    return this.containers.all();
  }

  /** Live task-manager containers (what the AM's client knows as assigned containers). */
  taskManagers(): SimContainer[] {
    return this.liveContainers().filter((c) => !c.isAm);
  }

  get taskManagerCount(): number {
    return this.containers.taskManagerCount;
  }

  /** Containers wanted but not placed yet. */
  get pending(): number {
    return Math.max(0, this.target - this.taskManagerCount);
  }

  attempts(): readonly SimAttempt[] {
    return this.attemptList;
  }

  get currentAttempt(): SimAttempt {
    return this.attemptList[this.attemptList.length - 1];
  }

  /** What the AM's AMRMClient has asked for: the union of all owners (the proxy's GET /blacklist). */
  clientBlacklistView(): string[] {
    return this.blacklist.clientView();
  }

  /** Each owner's hosts (owners with an empty set are left out), keys and hosts sorted. */
  ownersView(): Record<string, string[]> {
    return this.blacklist.ownersView();
  }

  /** The entity tag of the proxy's GET /blacklist answer now (am-blacklist.ts). */
  blacklistEtag(): string {
    return this.blacklist.etag();
  }

  /** Completed containers after a sequence number (completed-ring.ts). */
  completedAfter(after: number): CompletedPage {
    return this.completed.after(after);
  }

  /** What the scheduler honours now (RM REST appAttempt.blacklistedNodes). */
  schedulerBlacklistView(): string[] {
    return this.blacklist.schedulerView();
  }

  /** Deltas waiting for the next allocate. */
  pendingBlacklistDelta(): { additions: string[]; removals: string[] } {
    return this.blacklist.pendingDelta();
  }

  /** SchedulerAppUtils.isPlaceBlacklisted: host or rack. */
  isPlaceBlacklisted(node: SimNode): boolean {
    return this.blacklist.isPlaceBlacklisted(node.host, node.rack);
  }

  nodeStateCounts(): Record<NodeState, number> {
    const out = Object.fromEntries(NODE_STATES.map((s) => [s, 0])) as Record<NodeState, number>;
    for (const n of this.nodes) out[n.state]++;
    return out;
  }

  // ---- the AMRM proxy's write path -------------------------------------------------------------

  /** One owner's update (the proxy's POST /blacklist; am-blacklist.ts), counted. */
  updateBlacklist(additions: string[], removals: string[], owner: string = DEFAULT_BLACKLIST_OWNER): BlacklistUpdateResult {
    const r = this.blacklist.update(additions, removals, owner);
    if (!r.ok) {
      this.counters.blacklistPostsRejected++;
      return r;
    }
    this.counters.blacklistPosts++;
    this.counters.blacklistAdditions += additions.length;
    this.counters.blacklistRemovals += removals.length;
    return r;
  }

  /** Replaces one owner's whole set (the control API's stand-in for another owner, e.g. Flink's own blocklist). */
  setOwnerBlacklist(owner: string, hosts: string[]): BlacklistUpdateResult {
    const wanted = new Set(hosts);
    return this.updateBlacklist(hosts, this.blacklist.ownerHosts(owner).filter((h) => !wanted.has(h)), owner);
  }

  /** AMRMClient#releaseAssignedContainer for each id; ids the AM does not hold are "unknown". */
  release(ids: string[]): ReleaseResult {
    this.counters.releaseCalls++;
    const released: string[] = [];
    const unknown: string[] = [];
    for (const id of ids) {
      const c = this.containers.get(id);
      if (!c || c.isAm) {
        unknown.push(id);
        this.counters.releaseUnknownIds.push(id);
        continue;
      }
      this.remove(c);
      this.recordCompleted(c, EXIT_ABORTED, RELEASED_CONTAINER);
      released.push(id);
      this.counters.releasedContainerIds.push(id);
    }
    return { released, unknown };
  }

  // ---- control ---------------------------------------------------------------------------------

  /** Changes a node's state; containers on a node that leaves the scheduler are lost. */
  setNodeState(host: string, state: NodeState, healthReport?: string): SimNode {
    const node = this.byHost.get(host);
    if (!node) throw new Error(`no node ${host}`);
    node.state = state;
    node.healthReport = healthReport ?? (state === 'UNHEALTHY' ? 'simulated: unhealthy' : '');
    node.lastHealthUpdate = this.clock.now();
    if (!KEEPS_CONTAINERS.has(state)) {
      let amLost = false;
      for (const id of [...node.containers]) {
        const c = this.containers.get(id);
        if (!c) continue;
        if (c.isAm) amLost = true;
        this.remove(c);
        this.recordCompleted(c, EXIT_ABORTED, LOST_CONTAINER);
        this.counters.containersLost++;
      }
      if (amLost) this.newAttempt();
    }
    return node;
  }

  /**
   * Kills a container as the NM would; killing the AM's container starts a new attempt. The AM sees
   * it complete with `exitStatus` (default KILLED_EXCEEDED_PMEM, the NM's memory kill).
   */
  killContainer(id: string, exitStatus: number = EXIT_KILLED_EXCEEDED_PMEM, diagnostics?: string): boolean {
    const c = this.containers.get(id);
    if (!c) return false;
    this.remove(c);
    this.recordCompleted(c, exitStatus, diagnostics ?? defaultDiagnostics(c.id, exitStatus));
    this.counters.containersKilled++;
    if (c.isAm) this.newAttempt();
    return true;
  }

  /** A new application attempt (AM failover). */
  newAttempt(mode: NewAttemptBlacklist = this.newAttemptBlacklist): SimAttempt {
    const old = this.currentAttempt;
    old.state = 'FAILED';
    old.finishedTime = this.clock.now();
    old.registered = false;
    const oldAm = this.containers.get(old.amContainerId);
    if (oldAm) this.remove(oldAm);
    if (!this.keepContainersAcrossAttempts) {
      for (const c of this.taskManagers()) {
        this.remove(c);
        this.counters.containersLost++;
      }
    }
    this.blacklist.newAttempt(mode);
    return this.startAttempt();
  }

  /**
   * A work-preserving RM restart: running containers keep their ids, the RM's epoch moves on and
   * the numbering of new containers starts again under it, so the next worker of this attempt is
   * container_e<epoch>_…_<attempt>_000001 (the number the AM container has: the AM is known by the
   * attempt's amContainerId, never by its number).
   */
  rmRestart(): { epoch: number } {
    const epoch = this.containers.rmRestart();
    this.counters.rmRestarts++;
    return { epoch };
  }

  /** Changes the number of task managers the application wants. */
  setTarget(containers: number): void {
    if (!Number.isInteger(containers) || containers < 0) throw new Error('containers must be a non-negative integer');
    this.target = containers;
    // Flink returns surplus workers; the newest go first.
    const surplus = this.taskManagerCount - containers;
    if (surplus > 0) {
      const tms = this.taskManagers();
      for (const c of tms.slice(tms.length - surplus)) {
        this.remove(c);
        this.recordCompleted(c, EXIT_ABORTED, RELEASED_CONTAINER);
      }
    }
  }

  /** Places `n` task managers on one host now and keeps wanting them (a test or demo arranging a scene). */
  placeOn(host: string, n: number): string[] {
    const node = this.byHost.get(host);
    if (!node) throw new Error(`no node ${host}`);
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(this.place(node, false).id);
    this.target += n;
    return ids;
  }

  /**
   * One AM heartbeat (allocate): the pending blacklist delta reaches the scheduler, then the
   * missing containers are placed on RUNNING, non-blacklisted nodes with a free slot, spread
   * round-robin over a seeded shuffle of the eligible nodes.
   */
  allocate(): { placed: number; pending: number } {
    this.counters.allocationRounds++;
    this.blacklist.applyPending();

    const need = this.target - this.taskManagerCount;
    if (need <= 0) return { placed: 0, pending: 0 };
    const free = new Map<SimNode, number>();
    const eligible: SimNode[] = [];
    for (const n of this.nodes) {
      if (n.state !== 'RUNNING' || this.isPlaceBlacklisted(n)) continue;
      let tms = n.containers.size;
      if (n.host === this.currentAttempt.amHost) tms--; // the AM's container takes no task-manager slot
      const f = this.slotsPerNode - tms;
      if (f > 0) {
        eligible.push(n);
        free.set(n, f);
      }
    }
    shuffle(eligible, this.rng);
    const targets = spreadOver(eligible, free, need);
    for (const n of targets) this.place(n, false);
    this.counters.containersAllocated += targets.length;
    return { placed: targets.length, pending: need - targets.length };
  }

  /** Runs allocate() every tickMs on the cluster's clock (an AM heartbeat); tickMs ≤ 0 = never. */
  startTicking(tickMs: number): void {
    this.stopTick();
    if (!(tickMs > 0)) return;
    this.stopTicking = every(this.clock, tickMs, () => this.allocate());
  }

  stopTick(): void {
    this.stopTicking?.();
    this.stopTicking = undefined;
  }

  resetCounters(): void {
    this.counters = emptyCounters();
  }

  // ---- internals -------------------------------------------------------------------------------

  private startAttempt(): SimAttempt {
    const number = this.attemptList.length + 1;
    this.containers.startAttempt();
    const app = { clusterTimestamp: String(this.clusterTimestamp), id: this.appNumber };
    // The AM container goes to a RUNNING node; the app's blacklist does not apply to it (YARN places
    // AMs with its own system blacklist).
    const running = this.nodes.filter((n) => n.state === 'RUNNING');
    const pool = running.length > 0 ? running : this.nodes;
    const amNode = pool[Math.floor(this.rng() * pool.length)];
    const am = this.place(amNode, true, number);
    const attempt: SimAttempt = {
      number,
      id: formatAttemptId({ application: app, attempt: number }),
      amContainerId: am.id,
      amHost: amNode.host,
      startTime: this.clock.now(),
      finishedTime: 0,
      state: 'RUNNING',
      registered: true,
    };
    this.attemptList.push(attempt);
    this.counters.attemptsStarted++;
    return attempt;
  }

  private place(node: SimNode, isAm: boolean, attemptNumber = this.currentAttempt.number): SimContainer {
    return this.containers.place(node, isAm, attemptNumber);
  }

  /** What the current AM sees in onContainersCompleted; its own container it never sees. */
  private recordCompleted(c: SimContainer, exitStatus: number, diagnostics: string): void {
    if (c.isAm) return;
    const node = this.byHost.get(c.host);
    this.completed.record({ containerId: c.id, nodeId: node?.nodeId ?? c.host, exitStatus, diagnostics, finishedAt: this.clock.now() });
  }

  private remove(c: SimContainer): void {
    this.containers.remove(c);
  }
}
