/**
 * What the engine knows of the job's Flink, as data (read by watch-flink.ts, judged by the pure
 * rules of evacuation-steps.ts): its task managers' slots, its running jobs and their checkpoints
 * and restarts. Two questions are answered here, once: is every job *settled* (running with every
 * task running: nothing is being scheduled that an idle slot could be about to take), and is one
 * *restarting* (no release step may start then).
 */
import { CompletedCheckpoint, FlinkTaskManager, JobType, TaskCounts, TriggeredCheckpoint } from '../flink/types';

export interface FlinkJobView {
  jid: string;
  name: string;
  state: string;
  type?: JobType;
  tasks: TaskCounts;
  /** Periodic checkpointing's interval; absent: the job takes no checkpoints. */
  checkpointIntervalMs?: number;
  latestCheckpoint?: CompletedCheckpoint;
  /** Its numRestarts metric (the JobManager's metric fetcher may lag it by up to 10 s). */
  restarts?: number;
  /** A running batch job: the task managers that may still serve result partitions a consumer needs (read when asked). */
  pinned?: ReadonlySet<string>;
}

export interface FlinkView {
  /** One more per successful read (an idle task manager must be idle in two reads in a row). */
  seq: number;
  /** Monotonic ms of the read. */
  readAt: number;
  baseUrl: string;
  /** Whether a checkpoint can be triggered (POST reaches the JobManager, and Flink is 1.17 or later). */
  canTrigger: boolean;
  version?: string;
  taskManagers: ReadonlyMap<string, FlinkTaskManager>;
  /** The jobs that are not over. */
  jobs: readonly FlinkJobView[];
  /** Triggered checkpoints as last asked: job id → trigger id and answer. */
  triggers: ReadonlyMap<string, { triggerId: string; result: TriggeredCheckpoint }>;
}

/** The engine's knowledge of Flink: not used, not readable now (and why), or read. */
export type FlinkKnowledge = { kind: 'off'; why: string } | { kind: 'unknown'; error: string } | { kind: 'known'; view: FlinkView };

/** Job states in which a restart is in progress, or the job is not running yet. */
const NOT_RUNNING: ReadonlySet<string> = new Set(['CREATED', 'INITIALIZING', 'RESTARTING', 'FAILING', 'CANCELLING', 'RECONCILING']);

export function isRestarting(job: FlinkJobView): boolean {
  return NOT_RUNNING.has(job.state);
}

/**
 * Running, with no task on its way to a slot or out of one. A batch job's tasks wait in CREATED
 * for their inputs, which is its normal course; a streaming job's do not.
 */
export function isSettled(job: FlinkJobView): boolean {
  return job.state === 'RUNNING' && Object.keys(unsettledTasks(job)).length === 0;
}

/** Task states that keep a job from settling; CREATED only for a job that is not BATCH. */
const MOVING = ['scheduled', 'deploying', 'initializing', 'canceling', 'reconciling', 'failed'] as const;

/** The job's tasks on their way to a slot or out of one (what isSettled waits on), by state: none when settled. */
export function unsettledTasks(job: FlinkJobView): Partial<Record<'created' | (typeof MOVING)[number], number>> {
  const t = job.tasks;
  const out: Partial<Record<'created' | (typeof MOVING)[number], number>> = {};
  if (job.type !== 'BATCH' && t.created > 0) out.created = t.created;
  for (const k of MOVING) if (t[k] > 0) out[k] = t[k];
  return out;
}

export function isIdle(tm: FlinkTaskManager | undefined): boolean {
  return tm !== undefined && tm.slots > 0 && tm.freeSlots === tm.slots;
}

/** A streaming job that takes checkpoints: a checkpoint before a release shortens its replay. */
export function checkpoints(job: FlinkJobView): boolean {
  return job.state === 'RUNNING' && job.type !== 'BATCH' && job.checkpointIntervalMs !== undefined;
}

export function totalRestarts(jobs: readonly FlinkJobView[]): number | undefined {
  let n = 0;
  for (const j of jobs) {
    if (j.restarts === undefined) return undefined;
    n += j.restarts;
  }
  return n;
}
