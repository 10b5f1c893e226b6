/**
 * The sidecar's window into the job's Flink JobManager (its REST API), as a small port so the sync
 * engine's tests fake only this edge: what an evacuation needs to release task managers the way
 * Flink survives best (which are idle, whether the job runs, its checkpoints, its restarts).
 * The JSON of each endpoint is parsed by feature in json.ts; client.ts speaks HTTP.
 */

/** One task manager as Flink's ResourceManager lists it (GET /taskmanagers). On YARN its id is the container id. */
export interface FlinkTaskManager {
  id: string;
  slots: number;
  freeSlots: number;
}

/** Task counts by execution state of one job (GET /jobs/overview `tasks`). */
export interface TaskCounts {
  total: number;
  created: number;
  scheduled: number;
  deploying: number;
  initializing: number;
  running: number;
  finished: number;
  canceling: number;
  canceled: number;
  failed: number;
  reconciling: number;
}

export interface FlinkJobSummary {
  jid: string;
  name: string;
  state: string;
  tasks: TaskCounts;
}

export type JobType = 'STREAMING' | 'BATCH';

/** One job vertex, its state and its inputs (GET /jobs/:jid `vertices` and `plan.nodes[].inputs`). */
export interface FlinkVertex {
  id: string;
  name: string;
  status: string;
  /** Ids of the vertices this one consumes from. */
  inputs: string[];
}

export interface FlinkJobDetail {
  jid: string;
  state: string;
  /** Absent from JobManagers that predate `job-type`. */
  type?: JobType;
  vertices: FlinkVertex[];
}

/** GET /jobs/:jid/checkpoints/config: periodic checkpointing, or none (`interval` absent). */
export interface CheckpointConfig {
  /** ms between periodic checkpoints; absent when periodic checkpointing is off. */
  intervalMs?: number;
}

/** The newest completed checkpoint (GET /jobs/:jid/checkpoints `latest.completed`). */
export interface CompletedCheckpoint {
  id: number;
  /** Epoch ms (the JobManager's clock). */
  triggeredAt: number;
}

/** What a triggered checkpoint has become (GET /jobs/:jid/checkpoints/:triggerId). */
export type TriggeredCheckpoint =
  | { status: 'IN_PROGRESS' }
  | { status: 'COMPLETED'; checkpointId: number }
  | { status: 'FAILED'; error: string };

/** One task manager that ran subtasks of a vertex, by their states (GET /jobs/:jid/vertices/:vid/taskmanagers). */
export interface VertexTaskManager {
  taskManagerId: string;
  statusCounts: Readonly<Record<string, number>>;
}

export interface FlinkJobManager {
  /** `http(s)://host:port` (or the RM's web proxy of the application) it talks to. */
  readonly baseUrl: string;
  /** Whether POST calls reach the JobManager (the RM's web proxy passes only GET and PUT). */
  readonly canPost: boolean;
  /** Flink's version, e.g. "2.3.0" (GET /config `flink-version`). */
  version(): Promise<string | undefined>;
  taskManagers(): Promise<FlinkTaskManager[]>;
  jobs(): Promise<FlinkJobSummary[]>;
  job(jid: string): Promise<FlinkJobDetail>;
  checkpointConfig(jid: string): Promise<CheckpointConfig>;
  latestCheckpoint(jid: string): Promise<CompletedCheckpoint | undefined>;
  /** The job's restarts so far (its `numRestarts` metric); undefined when the JobManager does not report it yet. */
  restarts(jid: string): Promise<number | undefined>;
  /** Triggers a checkpoint now (Flink 1.17+, FLINK-27101); the trigger id to ask about. */
  triggerCheckpoint(jid: string): Promise<string>;
  triggeredCheckpoint(jid: string, triggerId: string): Promise<TriggeredCheckpoint>;
  vertexTaskManagers(jid: string, vertexId: string): Promise<VertexTaskManager[]>;
}

/** A Flink REST call failed; `status` is the HTTP status when there was an answer. */
export class FlinkCallError extends Error {
  constructor(message: string, readonly status?: number) {
    super(message);
    this.name = 'FlinkCallError';
  }
}

/** Job states from which a job does not come back (JobStatus#isGloballyTerminalState, and SUSPENDED). */
export const TERMINAL_JOB_STATES: ReadonlySet<string> = new Set(['FINISHED', 'CANCELED', 'FAILED', 'SUSPENDED']);
