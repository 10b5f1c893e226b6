/**
 * The simulated YARN cluster: nodes, one Flink application and its containers, the app's blacklist,
 * and a scheduler that honours it. No HTTP here (server.ts and the *-routes.ts files serve it).
 *
 * What it copies from YARN, and from where:
 *  - The AM side keeps AMRMClientImpl's three sets: `blacklistedNodes` (what the AM has asked for),
 *    and pending `blacklistAdditions` / `blacklistRemovals` that go out with the next allocate.
 *    updateBlacklist adds the additions (dropping them from pending removals), then the removals
 *    (dropping them from pending additions): within one call the removal wins.
 *  - The RM validates the request first (RMServerUtils.validateBlacklistRequest): "*" (ResourceRequest
 *    .ANY) among the additions fails the whole call with "Cannot add * to the blacklist!". The proxy
 *    contract refuses such an update at once (400) instead of poisoning the next allocate.
 *  - On allocate the scheduler applies additions then removals (AppSchedulingInfo
 *    .updateBlacklistedPlaces), then places containers. A place is blacklisted when the node's host
 *    or its rack is in the set (SchedulerAppUtils.isPlaceBlacklisted). Only RUNNING nodes take new
 *    containers (DECOMMISSIONING nodes keep theirs but get no new ones; GracefulDecommission.md).
 *  - Node loss: LOST, UNHEALTHY, DECOMMISSIONED, SHUTDOWN, REBOOTED remove the node from the
 *    scheduler and its containers are lost (RMNodeImpl sends NodeRemovedSchedulerEvent).
 *  - Flink's ResourceManager keeps the wanted number of task managers: a released, killed or lost
 *    container is requested again and placed on the next allocation round (an AM heartbeat).
 *  - A new attempt keeps the task-manager containers (Flink sets keep-containers-across-application-
 *    attempts); the blacklist of the new attempt is chosen by `newAttemptBlacklist` (see below).
 *  - The AM's one blacklist is shared by several owners (the sidecar as `blocklist`, Flink's own
 *    blocklist as `am`, …): each owner changes only its own set, the AMRMClient holds the union, so
 *    one owner's removal never lifts a host another owner still holds.
 *  - What the AM sees in onContainersCompleted is kept in a bounded ring with a sequence number.
 *    Exit statuses are Hadoop's (ContainerExitStatus): a container the AM releases through allocate
 *    and a container on a node that leaves the scheduler both complete as ABORTED (-100), with
 *    SchedulerUtils' diagnostics "Container released by application" / "Container released on a
 *    *lost* node"; a kill or an injected failure carries whatever status it is given.
 *
 * Everything is indexed by host (no O(nodes × containers) work); one allocation round is
 * O(nodes + containers placed).
 */
import { Clock, systemClock } from '../core/clock';
import { formatApplicationId, formatAttemptId, formatContainerId } from '../model/ids';
import { NodeState, NODE_STATES, ReleaseResult } from '../yarn/types';
import { Random, seededRandom, shuffle } from './random';
import { NewAttemptBlacklist } from './options';

/**
 * What the blacklist of a new application attempt starts as:
 *  - 'empty' (default): a new AM's AMRMClient starts with no blacklist and the scheduler attempt is
 *    fresh — the sidecar must push everything again;
 *  - 'inherit': both the scheduler's set and the proxy's view carry over (a work-preserving restart
 *    whose AM-side component recovered its state);
 *  - 'scheduler-only': the scheduler keeps the old set (AppSchedulingInfo
 *    .transferStateFromPreviousAppSchedulingInfo) but the new AM's client starts empty, so the proxy
 *    reports [] while YARN still honours the old entries, so a sidecar that trusts the proxy's
 *    list never removes them.
 */
export { NEW_ATTEMPT_BLACKLIST_MODES } from './options';
export type { NewAttemptBlacklist } from './options';

/** NodeStates in which a node keeps its containers. */
const KEEPS_CONTAINERS: ReadonlySet<NodeState> = new Set<NodeState>(['RUNNING', 'DECOMMISSIONING']);

export interface ClusterOptions {
  /** Number of NodeManagers. */
  nodes: number;
  /** Task-manager containers the application keeps running. */
  containers: number;
  /** Racks; nodes are split into contiguous blocks. Default: one rack per 20 nodes. */
  racks?: number;
  seed?: number;
  /** Task-manager containers one node can hold. Default: enough for twice the even share (≥ 4). */
  slotsPerNode?: number;
  /** The RM's cluster timestamp (part of every id). */
  clusterTimestamp?: number;
  /** The application's sequence number (application_<ts>_<NNNN>). */
  appNumber?: number;
  /** RM epoch written into container ids as e<epoch>_ (YARN does after an RM restart); undefined = none. */
  epoch?: number;
  newAttemptBlacklist?: NewAttemptBlacklist;
  /** Completed containers the proxy remembers (a ring; the oldest fall out). Default 1024. */
  completedRingSize?: number;
  /** Flink's default: task managers survive an AM failover. */
  keepContainersAcrossAttempts?: boolean;
  clock?: Clock;
}

export interface SimNode {
  index: number;
  host: string;
  rack: string;
  /** NodeId host:port. */
  nodeId: string;
  httpAddress: string;
  state: NodeState;
  healthReport: string;
  lastHealthUpdate: number;
  /** Ids of this application's live containers on the node (the AM's included). */
  containers: Set<string>;
}

export interface SimContainer {
  id: string;
  host: string;
  startedTime: number;
  /** The AM container of the current attempt (never released through the proxy). */
  isAm: boolean;
}

export interface SimAttempt {
  number: number;
  id: string;
  amContainerId: string;
  amHost: string;
  startTime: number;
  finishedTime: number;
  state: 'RUNNING' | 'FAILED';
  registered: boolean;
}

export interface SimCounters {
  rmRequests: number;
  amrmRequests: number;
  /** Last `user.name` seen on the RM face (simple auth). */
  rmLastUser: string | null;
  blacklistPosts: number;
  blacklistPostsRejected: number;
  blacklistAdditions: number;
  blacklistRemovals: number;
  releaseCalls: number;
  /** Every id released through the proxy, in order; an id appears once (a second release is "unknown"). */
  releasedContainerIds: string[];
  releaseUnknownIds: string[];
  allocationRounds: number;
  containersAllocated: number;
  containersLost: number;
  containersKilled: number;
  attemptsStarted: number;
  faultsInjected: { rm: number; amrm: number };
}

export function emptyCounters(): SimCounters {
  return {
    rmRequests: 0,
    amrmRequests: 0,
    rmLastUser: null,
    blacklistPosts: 0,
    blacklistPostsRejected: 0,
    blacklistAdditions: 0,
    blacklistRemovals: 0,
    releaseCalls: 0,
    releasedContainerIds: [],
    releaseUnknownIds: [],
    allocationRounds: 0,
    containersAllocated: 0,
    containersLost: 0,
    containersKilled: 0,
    attemptsStarted: 0,
    faultsInjected: { rm: 0, amrm: 0 },
  };
}

export type BlacklistUpdateResult =
  | { ok: true; blacklist: string[]; owners: Record<string, string[]> }
  | { ok: false; error: string };

export const ANY = '*';
export const CANNOT_ADD_ANY = 'Cannot add * to the blacklist!';

/** The owner the proxy contract assumes when a request names none: the sidecar. */
export const DEFAULT_BLACKLIST_OWNER = 'blocklist';
/** An owner is a short token: it appears in logs, URLs and the proxy's state. */
export const OWNER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function ownerError(owner: string): string | undefined {
  return OWNER_PATTERN.test(owner) ? undefined : `"owner" must be a short token (letters, digits, '.', '_', '-'; at most 64; got '${owner.slice(0, 80)}')`;
}

/** Hadoop's ContainerExitStatus values the simulator produces by itself. */
export const EXIT_ABORTED = -100;
export const EXIT_KILLED_EXCEEDED_PMEM = -104;
export const RELEASED_CONTAINER = 'Container released by application';
export const LOST_CONTAINER = 'Container released on a *lost* node';

/** One entry of the proxy's completed-containers ring (what onContainersCompleted reported). */
export interface CompletedContainer {
  seq: number;
  containerId: string;
  /** NodeId host:port of the node the container ran on. */
  nodeId: string;
  exitStatus: number;
  diagnostics: string;
  /** Epoch ms at which the AM saw it complete. */
  finishedAt: number;
}

/** NM-style diagnostics for an exit status (ContainerExecutor / ContainersMonitorImpl wording). */
function defaultDiagnostics(id: string, exitStatus: number): string {
  if (exitStatus === EXIT_KILLED_EXCEEDED_PMEM) return `Container [${id}] is running beyond physical memory limits. Killing container.`;
  if (exitStatus > 0) return `Exception from container-launch.\nContainer id: ${id}\nExit code: ${exitStatus}`;
  return `Container ${id} completed with exit status ${exitStatus}`;
}

const pad = (n: number, w: number): string => String(n).padStart(w, '0');

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
  private readonly containerMap = new Map<string, SimContainer>();
  private readonly attemptList: SimAttempt[] = [];
  private readonly rng: Random;
  private readonly appNumber: number;
  private readonly epoch: number | undefined;
  private nextContainerSeq = 2;
  private tmCount = 0;

  // Each owner's own set; the AMRMClient holds their union.
  private readonly owners = new Map<string, Set<string>>();
  // AMRMClientImpl's sets (the AM side) …
  private readonly clientBlacklist = new Set<string>();
  private readonly pendingAdditions = new Set<string>();
  private readonly pendingRemovals = new Set<string>();
  // … and the scheduler's placesBlacklistedByApp (the RM side).
  private readonly schedulerBlacklist = new Set<string>();

  private stopTicking: (() => void) | undefined;

  private readonly completedRing: CompletedContainer[] = [];
  private readonly completedRingSize: number;
  private completedSeq = 0;

  constructor(opts: ClusterOptions) {
    if (!Number.isInteger(opts.nodes) || opts.nodes < 1) throw new Error('nodes must be a positive integer');
    if (!Number.isInteger(opts.containers) || opts.containers < 0) throw new Error('containers must be a non-negative integer');
    this.clock = opts.clock ?? systemClock;
    this.rng = seededRandom(opts.seed ?? 1);
    this.clusterTimestamp = opts.clusterTimestamp ?? 1_652_313_600_000;
    this.appNumber = opts.appNumber ?? 1;
    this.epoch = opts.epoch;
    this.applicationId = formatApplicationId({ clusterTimestamp: String(this.clusterTimestamp), id: this.appNumber });
    this.keepContainersAcrossAttempts = opts.keepContainersAcrossAttempts ?? true;
    // As a real RM does (Hadoop 3.5.0, test/real/yarn-sidecar.test.ts): with keep-containers the
    // scheduler hands the new attempt the old blacklist while the new AM's client starts empty.
    this.newAttemptBlacklist = opts.newAttemptBlacklist ?? (this.keepContainersAcrossAttempts ? 'scheduler-only' : 'empty');
    this.target = opts.containers;
    this.slotsPerNode = opts.slotsPerNode ?? Math.max(4, Math.ceil((2 * opts.containers) / opts.nodes));
    this.startedOn = this.clock.now();
    this.completedRingSize = opts.completedRingSize ?? 1024;
    if (!Number.isInteger(this.completedRingSize) || this.completedRingSize < 1) throw new Error('completedRingSize must be a positive integer');

    const racks = Math.max(1, Math.min(opts.racks ?? Math.ceil(opts.nodes / 20), opts.nodes));
    const perRack = Math.ceil(opts.nodes / racks);
    const width = Math.max(4, String(opts.nodes).length);
    const rackWidth = Math.max(2, String(racks).length);
    for (let i = 0; i < opts.nodes; i++) {
      const host = `node${pad(i + 1, width)}.sim.local`;
      const node: SimNode = {
        index: i,
        host,
        rack: `/rack${pad(Math.floor(i / perRack) + 1, rackWidth)}`,
        nodeId: `${host}:8041`,
        httpAddress: `${host}:8042`,
        state: 'RUNNING',
        healthReport: '',
        lastHealthUpdate: this.startedOn,
        containers: new Set(),
      };
      this.nodes.push(node);
      this.byHost.set(host, node);
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
    return this.containerMap.get(id);
  }

  /** Live containers of the application (the AM's included). */
  liveContainers(): SimContainer[] {
    return [...this.containerMap.values()];
  }

  /** Live task-manager containers (what the AM's client knows as assigned containers). */
  taskManagers(): SimContainer[] {
    return this.liveContainers().filter((c) => !c.isAm);
  }

  get taskManagerCount(): number {
    return this.tmCount;
  }

  /** Containers wanted but not placed yet. */
  get pending(): number {
    return Math.max(0, this.target - this.tmCount);
  }

  attempts(): readonly SimAttempt[] {
    return this.attemptList;
  }

  get currentAttempt(): SimAttempt {
    return this.attemptList[this.attemptList.length - 1];
  }

  /** What the AM's AMRMClient has asked for: the union of all owners (the proxy's GET /blacklist). */
  clientBlacklistView(): string[] {
    return [...this.clientBlacklist].sort();
  }

  /** Each owner's hosts (owners with an empty set are left out), keys and hosts sorted. */
  ownersView(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const owner of [...this.owners.keys()].sort()) {
      const set = this.owners.get(owner);
      if (set && set.size > 0) out[owner] = [...set].sort();
    }
    return out;
  }

  /**
   * Completed containers with a sequence number above `after`, oldest first, and the sequence
   * number to ask after next time. An `after` beyond the newest entry means the caller remembers
   * a proxy that has since restarted (its numbering began again): it gets the whole ring.
   */
  completedAfter(after: number): { containers: CompletedContainer[]; next: number } {
    const from = after > this.completedSeq ? 0 : after;
    const containers = this.completedRing.filter((c) => c.seq > from);
    return { containers: containers.map((c) => ({ ...c })), next: this.completedSeq };
  }

  /** What the scheduler honours now (RM REST appAttempt.blacklistedNodes). */
  schedulerBlacklistView(): string[] {
    return [...this.schedulerBlacklist].sort();
  }

  /** Deltas waiting for the next allocate. */
  pendingBlacklistDelta(): { additions: string[]; removals: string[] } {
    return { additions: [...this.pendingAdditions].sort(), removals: [...this.pendingRemovals].sort() };
  }

  /** SchedulerAppUtils.isPlaceBlacklisted: host or rack. */
  isPlaceBlacklisted(node: SimNode): boolean {
    return this.schedulerBlacklist.has(node.host) || this.schedulerBlacklist.has(node.rack);
  }

  nodeStateCounts(): Record<NodeState, number> {
    const out = Object.fromEntries(NODE_STATES.map((s) => [s, 0])) as Record<NodeState, number>;
    for (const n of this.nodes) out[n.state]++;
    return out;
  }

  // ---- the AMRM proxy's write path -------------------------------------------------------------

  /**
   * One owner's update (the proxy's POST /blacklist), after the RM's validation (whole update
   * refused on "*"): the owner's set takes the additions, then the removals (removal wins within a
   * call, YARN's rule); the AMRMClient then gets AMRMClient#updateBlacklist with the change of the
   * union only, so a host another owner holds stays blacklisted.
   */
  updateBlacklist(additions: string[], removals: string[], owner: string = DEFAULT_BLACKLIST_OWNER): BlacklistUpdateResult {
    const bad = ownerError(owner);
    if (bad !== undefined) {
      this.counters.blacklistPostsRejected++;
      return { ok: false, error: bad };
    }
    if (additions.includes(ANY)) {
      this.counters.blacklistPostsRejected++;
      return { ok: false, error: CANNOT_ADD_ANY };
    }
    this.counters.blacklistPosts++;
    this.counters.blacklistAdditions += additions.length;
    this.counters.blacklistRemovals += removals.length;
    let set = this.owners.get(owner);
    if (!set) {
      set = new Set();
      this.owners.set(owner, set);
    }
    for (const a of additions) set.add(a);
    for (const r of removals) set.delete(r);
    if (set.size === 0) this.owners.delete(owner);
    this.syncClient([...additions, ...removals]);
    return { ok: true, blacklist: this.clientBlacklistView(), owners: this.ownersView() };
  }

  /** Replaces one owner's whole set (the control API's stand-in for another owner, e.g. Flink's own blocklist). */
  setOwnerBlacklist(owner: string, hosts: string[]): BlacklistUpdateResult {
    const current = [...(this.owners.get(owner) ?? [])];
    const wanted = new Set(hosts);
    return this.updateBlacklist(hosts, current.filter((h) => !wanted.has(h)), owner);
  }

  /** Brings the AMRMClient's set (and its pending deltas) to the union of the owners for these hosts. */
  private syncClient(hosts: Iterable<string>): void {
    for (const h of new Set(hosts)) {
      let held = false;
      for (const set of this.owners.values()) {
        if (set.has(h)) {
          held = true;
          break;
        }
      }
      if (held && !this.clientBlacklist.has(h)) {
        this.clientBlacklist.add(h);
        this.pendingAdditions.add(h);
        this.pendingRemovals.delete(h);
      } else if (!held && (this.clientBlacklist.has(h) || this.pendingAdditions.has(h))) {
        this.clientBlacklist.delete(h);
        this.pendingRemovals.add(h);
        this.pendingAdditions.delete(h);
      } else if (!held) {
        // AMRMClient#updateBlacklist sends a removal even for a host it never held.
        this.pendingRemovals.add(h);
      }
    }
  }

  /** AMRMClient#releaseAssignedContainer for each id; ids the AM does not hold are "unknown". */
  release(ids: string[]): ReleaseResult {
    this.counters.releaseCalls++;
    const released: string[] = [];
    const unknown: string[] = [];
    for (const id of ids) {
      const c = this.containerMap.get(id);
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
        const c = this.containerMap.get(id);
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
    const c = this.containerMap.get(id);
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
    const oldAm = this.containerMap.get(old.amContainerId);
    if (oldAm) this.remove(oldAm);
    if (!this.keepContainersAcrossAttempts) {
      for (const c of this.taskManagers()) {
        this.remove(c);
        this.counters.containersLost++;
      }
    }
    if (mode !== 'inherit') {
      this.owners.clear();
      this.clientBlacklist.clear();
      this.pendingAdditions.clear();
      this.pendingRemovals.clear();
    }
    if (mode === 'empty') this.schedulerBlacklist.clear();
    return this.startAttempt();
  }

  /** Changes the number of task managers the application wants. */
  setTarget(containers: number): void {
    if (!Number.isInteger(containers) || containers < 0) throw new Error('containers must be a non-negative integer');
    this.target = containers;
    // Flink returns surplus workers; the newest go first.
    const surplus = this.tmCount - containers;
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
    for (const a of this.pendingAdditions) this.schedulerBlacklist.add(a);
    for (const r of this.pendingRemovals) this.schedulerBlacklist.delete(r);
    this.pendingAdditions.clear();
    this.pendingRemovals.clear();

    let need = this.target - this.tmCount;
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
    let placed = 0;
    let round = eligible;
    while (need > 0 && round.length > 0) {
      const next: SimNode[] = [];
      for (const n of round) {
        if (need === 0) break;
        this.place(n, false);
        placed++;
        need--;
        const f = (free.get(n) ?? 0) - 1;
        free.set(n, f);
        if (f > 0) next.push(n);
      }
      round = next;
    }
    this.counters.containersAllocated += placed;
    return { placed, pending: need };
  }

  /** Runs allocate() every tickMs on the cluster's clock (an AM heartbeat); tickMs ≤ 0 = never. */
  startTicking(tickMs: number): void {
    this.stopTick();
    if (!(tickMs > 0)) return;
    let stopped = false;
    let cancel: () => void = () => {};
    const arm = (): void => {
      cancel = this.clock.setTimer(tickMs, () => {
        if (stopped) return;
        this.allocate();
        arm();
      });
    };
    arm();
    this.stopTicking = () => {
      stopped = true;
      cancel();
    };
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
    this.nextContainerSeq = 1;
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
    const id = formatContainerId({
      ...(this.epoch !== undefined ? { epoch: this.epoch } : {}),
      application: { clusterTimestamp: String(this.clusterTimestamp), id: this.appNumber },
      attempt: attemptNumber,
      container: this.nextContainerSeq++,
    });
    const c: SimContainer = { id, host: node.host, startedTime: this.clock.now(), isAm };
    this.containerMap.set(id, c);
    node.containers.add(id);
    if (!isAm) this.tmCount++;
    return c;
  }

  /** What the current AM sees in onContainersCompleted; its own container it never sees. */
  private recordCompleted(c: SimContainer, exitStatus: number, diagnostics: string): void {
    if (c.isAm) return;
    const node = this.byHost.get(c.host);
    this.completedRing.push({ seq: ++this.completedSeq, containerId: c.id, nodeId: node?.nodeId ?? c.host, exitStatus, diagnostics, finishedAt: this.clock.now() });
    if (this.completedRing.length > this.completedRingSize) this.completedRing.splice(0, this.completedRing.length - this.completedRingSize);
  }

  private remove(c: SimContainer): void {
    if (!this.containerMap.delete(c.id)) return;
    this.byHost.get(c.host)?.containers.delete(c.id);
    if (!c.isAm) this.tmCount--;
  }
}
