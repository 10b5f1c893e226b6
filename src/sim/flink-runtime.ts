/**
 * The simulated Flink's runtime, for evacuations: which task managers Flink has registered and
 * how many of their slots its one job holds, the job's state through failovers, its checkpoints
 * (periodic and triggered) and, for a batch job, the task managers that hold result partitions a
 * consumer still needs. No HTTP here (flink-routes.ts serves it). State is brought up to the
 * cluster's clock lazily, on every read.
 *
 * What it copies from Flink on YARN (and where the test suite's real JobManagers say so):
 *  - a task manager's id is its YARN container id; it registers when its container starts, and
 *    Flink notices a container that is gone only after `noticeDelayMs` (a heartbeat, YARN's
 *    completed-containers report): a released task manager stays listed for a while;
 *  - a lost task manager that held the job's slots fails the job over: RESTARTING for
 *    `restartDelayMs` (fixed-delay restart), then RUNNING with its tasks SCHEDULED until free slots
 *    on registered task managers take them; every failover counts in numRestarts;
 *  - a streaming job restarts whole (an all-to-all exchange makes it one pipelined region);
 *  - a checkpoint completes `checkpointDurationMs` after it starts; a failover aborts one in flight;
 *  - batch: a source stage, then a sink stage reading the source's blocking partitions, which stay
 *    on the task managers the source ran on until the sink finishes.
 */
import { SimCluster } from './cluster';

export type SimJobType = 'STREAMING' | 'BATCH';

export interface FlinkRuntimeOptions {
  slotsPerTaskManager?: number;
  /** Slots the job holds (its parallelism); default: every slot of the task managers at start. */
  parallelism?: number;
  type?: SimJobType;
  /** Periodic checkpoints (streaming); absent: the job takes none. */
  checkpointIntervalMs?: number;
  checkpointDurationMs?: number;
  restartDelayMs?: number;
  noticeDelayMs?: number;
  /** Batch: how long the source stage runs, then the sink stage. */
  sourceMs?: number;
  sinkMs?: number;
}

interface Trigger {
  startedAt: number;
  result?: { status: 'COMPLETED'; checkpointId: number } | { status: 'FAILED'; error: string };
}

export interface SimTaskManager {
  id: string;
  slots: number;
  free: number;
}

export class SimFlinkRuntime {
  readonly opts: Required<Omit<FlinkRuntimeOptions, 'checkpointIntervalMs' | 'parallelism'>> & { checkpointIntervalMs?: number };
  parallelism: number;
  state = 'RUNNING';
  restarts = 0;
  /** Whether the JobManager answers a checkpoint trigger: 'complete', 'fail' or 'never' (a slow one). */
  triggerBehaviour: 'complete' | 'fail' | 'never' = 'complete';
  /** Slots the job holds on each registered task manager. */
  private readonly held = new Map<string, number>();
  private readonly registered = new Set<string>();
  /** Containers gone from YARN, by when they went (Flink has not noticed yet). */
  private readonly goneAt = new Map<string, number>();
  private restartingUntil: number | undefined;
  private runningSince: number;
  private lastCheckpoint: { id: number; at: number } | undefined;
  private nextCheckpointId = 1;
  private nextPeriodicAt: number | undefined;
  private readonly triggers = new Map<string, Trigger>();
  private triggerSeq = 0;
  /** Batch: task managers the source stage ran on, and when the stages end. */
  private readonly producers = new Set<string>();

  constructor(
    private readonly cluster: SimCluster,
    opts: FlinkRuntimeOptions = {},
  ) {
    this.opts = { slotsPerTaskManager: 2, type: 'STREAMING', checkpointDurationMs: 200, restartDelayMs: 1000, noticeDelayMs: 500, sourceMs: 10_000, sinkMs: 10_000, ...opts };
    const now = cluster.clock.now();
    this.runningSince = now;
    for (const c of cluster.taskManagers()) this.registered.add(c.id);
    this.parallelism = opts.parallelism ?? this.registered.size * this.opts.slotsPerTaskManager;
    this.schedulePeriodic(now);
    this.assign(now);
  }

  get type(): SimJobType {
    return this.opts.type;
  }

  /** Registered task managers and their slots, as Flink's ResourceManager lists them. */
  taskManagers(): SimTaskManager[] {
    this.sync();
    return [...this.registered].sort().map((id) => ({ id, slots: this.opts.slotsPerTaskManager, free: this.opts.slotsPerTaskManager - (this.held.get(id) ?? 0) }));
  }

  /** Task counts of the job by state (the overview's `tasks`). */
  tasks(): Record<string, number> {
    this.sync();
    const assigned = [...this.held.values()].reduce((a, b) => a + b, 0);
    const base = { total: this.total(), created: 0, scheduled: 0, deploying: 0, initializing: 0, running: 0, finished: 0, canceling: 0, canceled: 0, failed: 0, reconciling: 0 };
    if (this.state === 'RESTARTING') return { ...base, canceled: this.total() };
    if (this.state === 'FINISHED') return { ...base, finished: this.total() };
    if (this.opts.type === 'BATCH') return this.batchTasks(base, assigned);
    return { ...base, running: assigned, scheduled: this.parallelism - assigned };
  }

  /** The batch job's vertices with their states and inputs (source → sink). */
  vertices(): { id: string; name: string; status: string; inputs: string[] }[] {
    this.sync();
    const stage = this.batchStage();
    const s = this.state === 'FINISHED' || stage !== 'source' ? 'FINISHED' : this.state === 'RESTARTING' ? 'CANCELED' : 'RUNNING';
    const k = this.state === 'FINISHED' ? 'FINISHED' : stage === 'sink' ? (this.state === 'RESTARTING' ? 'CANCELED' : 'RUNNING') : 'CREATED';
    if (this.opts.type !== 'BATCH') return [{ id: VERTEX_SOURCE, name: 'Source: orders -> Map -> Sink', status: this.state === 'RESTARTING' ? 'CANCELED' : this.state, inputs: [] }];
    return [
      { id: VERTEX_SOURCE, name: 'Source: orders -> Map', status: s, inputs: [] },
      { id: VERTEX_SINK, name: 'Keyed Reduce -> Sink', status: k, inputs: [VERTEX_SOURCE] },
    ];
  }

  /** The task managers that ran subtasks of a vertex (the batch source's hold its partitions). */
  vertexTaskManagers(vertexId: string): string[] {
    this.sync();
    if (vertexId === VERTEX_SOURCE && this.opts.type === 'BATCH') return [...this.producers].sort();
    return [...this.held.keys()].sort();
  }

  latestCheckpoint(): { id: number; at: number } | undefined {
    this.sync();
    return this.lastCheckpoint;
  }

  trigger(): string {
    this.sync();
    const id = `${(++this.triggerSeq).toString(16).padStart(32, '0')}`;
    this.triggers.set(id, { startedAt: this.cluster.clock.now() });
    return id;
  }

  triggered(id: string): Trigger | undefined {
    this.sync();
    return this.triggers.get(id);
  }

  /** Brings the job up to the cluster's clock: registrations, losses, failovers, checkpoints, stages. */
  sync(): void {
    const now = this.cluster.clock.now();
    this.noticeLosses(now);
    if (this.state === 'RESTARTING' && this.restartingUntil !== undefined && now >= this.restartingUntil) {
      this.state = 'RUNNING';
      this.runningSince = now;
      this.schedulePeriodic(now);
    }
    this.assign(now);
    this.checkpoints(now);
    if (this.opts.type === 'BATCH' && this.state === 'RUNNING' && now - this.runningSince >= this.opts.sourceMs + this.opts.sinkMs) {
      this.state = 'FINISHED';
      this.held.clear();
      this.producers.clear();
    }
  }

  private noticeLosses(now: number): void {
    const live = new Set(this.cluster.taskManagers().map((c) => c.id));
    for (const id of live) if (!this.registered.has(id)) this.registered.add(id);
    let lostHeld = false;
    for (const id of this.registered) {
      if (live.has(id)) continue;
      const at = this.goneAt.get(id) ?? now;
      this.goneAt.set(id, at);
      if (now - at < this.opts.noticeDelayMs) continue;
      this.registered.delete(id);
      this.goneAt.delete(id);
      if ((this.held.get(id) ?? 0) > 0 || this.producers.has(id)) lostHeld = true;
      this.held.delete(id);
    }
    if (lostHeld && this.state !== 'FINISHED') this.failover(now);
  }

  private failover(now: number): void {
    this.restarts++;
    this.state = 'RESTARTING';
    this.restartingUntil = now + this.opts.restartDelayMs;
    this.held.clear();
    this.producers.clear();
    this.nextPeriodicAt = undefined;
    for (const t of this.triggers.values()) if (!t.result) t.result = { status: 'FAILED', error: 'org.apache.flink.runtime.checkpoint.CheckpointException: Checkpoint was canceled because a barrier from a task that failed over did not arrive.' };
  }

  /** RUNNING: the job takes free slots of registered task managers, in id order, until it holds its parallelism. */
  private assign(now: number): void {
    if (this.state !== 'RUNNING') return;
    let need = this.slotsWanted(now) - [...this.held.values()].reduce((a, b) => a + b, 0);
    for (const id of [...this.registered].sort()) {
      if (need <= 0) break;
      if (this.goneAt.has(id)) continue;
      const used = this.held.get(id) ?? 0;
      const take = Math.min(need, this.opts.slotsPerTaskManager - used);
      if (take <= 0) continue;
      this.held.set(id, used + take);
      if (this.opts.type === 'BATCH' && this.batchStage() === 'source') this.producers.add(id);
      need -= take;
    }
    // A batch stage that ended gives its slots back (the source's partitions stay where they were written).
    if (need < 0) this.release(-need);
  }

  private slotsWanted(now: number): number {
    if (this.opts.type !== 'BATCH') return this.parallelism;
    void now;
    return this.batchStage() === 'source' ? this.parallelism : Math.max(1, Math.floor(this.parallelism / 2));
  }

  private release(n: number): void {
    for (const id of [...this.held.keys()].sort().reverse()) {
      if (n <= 0) return;
      const used = this.held.get(id) ?? 0;
      const give = Math.min(n, used);
      if (used - give > 0) this.held.set(id, used - give);
      else this.held.delete(id);
      n -= give;
    }
  }

  private batchStage(): 'source' | 'sink' {
    return this.cluster.clock.now() - this.runningSince < this.opts.sourceMs ? 'source' : 'sink';
  }

  private batchTasks(base: Record<string, number>, assigned: number): Record<string, number> {
    const p = this.parallelism;
    const sink = Math.max(1, Math.floor(p / 2));
    if (this.batchStage() === 'source') return { ...base, total: p + sink, running: assigned, scheduled: p - assigned, created: sink };
    return { ...base, total: p + sink, finished: p, running: assigned, scheduled: sink - assigned };
  }

  private total(): number {
    return this.opts.type === 'BATCH' ? this.parallelism + Math.max(1, Math.floor(this.parallelism / 2)) : this.parallelism;
  }

  private allRunning(): boolean {
    return this.state === 'RUNNING' && [...this.held.values()].reduce((a, b) => a + b, 0) >= this.parallelism;
  }

  private schedulePeriodic(now: number): void {
    this.nextPeriodicAt = this.opts.checkpointIntervalMs !== undefined && this.opts.type === 'STREAMING' ? now + this.opts.checkpointIntervalMs : undefined;
  }

  private checkpoints(now: number): void {
    const d = this.opts.checkpointDurationMs;
    while (this.nextPeriodicAt !== undefined && this.nextPeriodicAt + d <= now && this.state === 'RUNNING') {
      this.complete(this.nextPeriodicAt);
      this.nextPeriodicAt += this.opts.checkpointIntervalMs!;
    }
    for (const t of this.triggers.values()) {
      if (t.result || now < t.startedAt + d || this.triggerBehaviour === 'never') continue;
      if (this.triggerBehaviour === 'fail') t.result = { status: 'FAILED', error: 'org.apache.flink.runtime.checkpoint.CheckpointException: Checkpoint expired before completing.' };
      else if (this.allRunning()) t.result = { status: 'COMPLETED', checkpointId: this.complete(t.startedAt) };
    }
  }

  private complete(at: number): number {
    const id = this.nextCheckpointId++;
    this.lastCheckpoint = { id, at };
    return id;
  }
}

export const VERTEX_SOURCE = 'cbc357ccb763df2852fee8c4fc7d55f2';
export const VERTEX_SINK = '90bea66de1c231edf33913ecd54406c1';
