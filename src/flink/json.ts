/**
 * Flink JobManager REST bodies an evacuation reads, parsed by feature rather than by version (the
 * shapes of Flink 1.17 to 2.x; fixtures from real JobManagers in test/fixtures/flink/<version>/).
 * Every parser refuses a body it cannot use with a message naming the field: a wrong answer must
 * fail the read, never pass for "no task manager is busy".
 */
import { CheckpointConfig, CompletedCheckpoint, FlinkJobDetail, FlinkJobSummary, FlinkTaskManager, FlinkVertex, JobType, TaskCounts, TriggeredCheckpoint, VertexTaskManager } from './types';

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const fail = (error: string): { ok: false; error: string } => ({ ok: false, error });

/** A JSON number or a string of digits (a proxy may turn longs into strings); beyond 2^53 it is not exact. */
function num(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^-?\d{1,19}$/.test(v)) return Number(v);
  return undefined;
}

function count(v: unknown): number | undefined {
  const n = num(v);
  return n !== undefined && Number.isInteger(n) && n >= 0 ? n : undefined;
}

export function parseFlinkVersion(body: unknown): string | undefined {
  return isObj(body) && typeof body['flink-version'] === 'string' ? body['flink-version'] : undefined;
}

export function parseTaskManagers(body: unknown): Parsed<FlinkTaskManager[]> {
  if (!isObj(body) || !Array.isArray(body.taskmanagers)) return fail('taskmanagers: expected {"taskmanagers":[…]}');
  const out: FlinkTaskManager[] = [];
  for (const [i, raw] of body.taskmanagers.entries()) {
    const where = `taskmanagers[${i}]`;
    if (!isObj(raw) || typeof raw.id !== 'string' || raw.id === '') return fail(`${where}.id is not a task manager id`);
    const slots = count(raw.slotsNumber);
    const freeSlots = count(raw.freeSlots);
    if (slots === undefined || freeSlots === undefined || freeSlots > slots) return fail(`${where} (${raw.id}): slotsNumber/freeSlots are not counts of slots`);
    out.push({ id: raw.id, slots, freeSlots });
  }
  return { ok: true, value: out };
}

const TASK_STATES = ['total', 'created', 'scheduled', 'deploying', 'initializing', 'running', 'finished', 'canceling', 'canceled', 'failed', 'reconciling'] as const;

function taskCounts(raw: unknown, where: string): Parsed<TaskCounts> {
  if (!isObj(raw)) return fail(`${where}.tasks is not an object of counts`);
  const out = {} as TaskCounts;
  for (const k of TASK_STATES) {
    // States a JobManager does not know yet (older versions lack some) count 0.
    const n = raw[k] === undefined ? 0 : count(raw[k]);
    if (n === undefined) return fail(`${where}.tasks.${k} is not a count`);
    out[k] = n;
  }
  return { ok: true, value: out };
}

export function parseJobs(body: unknown): Parsed<FlinkJobSummary[]> {
  if (!isObj(body) || !Array.isArray(body.jobs)) return fail('jobs overview: expected {"jobs":[…]}');
  const out: FlinkJobSummary[] = [];
  for (const [i, raw] of body.jobs.entries()) {
    const where = `jobs[${i}]`;
    if (!isObj(raw) || typeof raw.jid !== 'string' || !/^[0-9a-f]{32}$/.test(raw.jid)) return fail(`jobs overview: ${where}.jid is not a 32-hex job id`);
    if (typeof raw.state !== 'string') return fail(`jobs overview: ${where}.state is not a job state`);
    const tasks = taskCounts(raw.tasks, `jobs overview: ${where}`);
    if (!tasks.ok) return tasks;
    out.push({ jid: raw.jid, name: typeof raw.name === 'string' ? raw.name : '', state: raw.state, tasks: tasks.value });
  }
  return { ok: true, value: out };
}

/** The plan's inputs of each vertex (`plan.nodes[].inputs[].id`); a plan Flink sends as a string is parsed too. */
function planInputs(plan: unknown): Map<string, string[]> {
  const p = typeof plan === 'string' ? safeJson(plan) : plan;
  const out = new Map<string, string[]>();
  if (!isObj(p) || !Array.isArray(p.nodes)) return out;
  for (const n of p.nodes) {
    if (!isObj(n) || typeof n.id !== 'string') continue;
    const inputs = Array.isArray(n.inputs) ? n.inputs.filter(isObj).map((x) => x.id).filter((x): x is string => typeof x === 'string') : [];
    out.set(n.id, inputs);
  }
  return out;
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return undefined;
  }
}

export function parseJobDetail(body: unknown, jid: string): Parsed<FlinkJobDetail> {
  if (!isObj(body) || body.jid !== jid) return fail(`job ${jid}: the answer is not this job's details`);
  if (typeof body.state !== 'string') return fail(`job ${jid}: state is not a job state`);
  if (!Array.isArray(body.vertices)) return fail(`job ${jid}: vertices is not a list`);
  const inputs = planInputs(body.plan);
  const vertices: FlinkVertex[] = [];
  for (const [i, v] of body.vertices.entries()) {
    if (!isObj(v) || typeof v.id !== 'string' || typeof v.status !== 'string') return fail(`job ${jid}: vertices[${i}] lacks id/status`);
    vertices.push({ id: v.id, name: typeof v.name === 'string' ? v.name : '', status: v.status, inputs: inputs.get(v.id) ?? [] });
  }
  const out: FlinkJobDetail = { jid, state: body.state, vertices };
  const type = body['job-type'];
  if (type === 'STREAMING' || type === 'BATCH') out.type = type as JobType;
  return { ok: true, value: out };
}

/**
 * Periodic checkpointing is on when the interval is a real one: a job without it reports
 * Long.MAX_VALUE (or -1) as its interval, or the JobManager answers 404 (the client maps that).
 */
export function parseCheckpointConfig(body: unknown): Parsed<CheckpointConfig> {
  if (!isObj(body)) return fail('checkpoints/config: the body is not a JSON object');
  const interval = num(body.interval);
  if (interval === undefined) return fail('checkpoints/config: interval is not a number');
  return { ok: true, value: interval > 0 && interval < Number.MAX_SAFE_INTEGER ? { intervalMs: interval } : {} };
}

export function parseLatestCheckpoint(body: unknown): Parsed<CompletedCheckpoint | undefined> {
  if (!isObj(body)) return fail('checkpoints: the body is not a JSON object');
  const latest = body.latest;
  if (latest === undefined || latest === null) return { ok: true, value: undefined };
  if (!isObj(latest)) return fail('checkpoints: latest is not an object');
  const c = latest.completed;
  if (c === undefined || c === null) return { ok: true, value: undefined };
  if (!isObj(c)) return fail('checkpoints: latest.completed is not an object');
  const id = count(c.id);
  const triggeredAt = num(c.trigger_timestamp);
  if (id === undefined || triggeredAt === undefined) return fail('checkpoints: latest.completed lacks id/trigger_timestamp');
  return { ok: true, value: { id, triggeredAt } };
}

/** GET /jobs/:jid/metrics?get=numRestarts → [{"id":"numRestarts","value":"3"}]; [] until the metric fetcher has it. */
export function parseRestarts(body: unknown): Parsed<number | undefined> {
  if (!Array.isArray(body)) return fail('metrics: expected a list of {id, value}');
  const m = body.find((x) => isObj(x) && x.id === 'numRestarts');
  if (m === undefined) return { ok: true, value: undefined };
  const n = count((m as Obj).value);
  if (n === undefined) return fail('metrics: numRestarts is not a count');
  return { ok: true, value: n };
}

export function parseTriggerId(body: unknown): Parsed<string> {
  if (!isObj(body) || typeof body['request-id'] !== 'string' || body['request-id'] === '') return fail('checkpoint trigger: expected {"request-id": …}');
  return { ok: true, value: body['request-id'] };
}

export function parseTriggeredCheckpoint(body: unknown): Parsed<TriggeredCheckpoint> {
  if (!isObj(body) || !isObj(body.status) || typeof body.status.id !== 'string') return fail('checkpoint status: expected {"status":{"id":…}}');
  if (body.status.id === 'IN_PROGRESS') return { ok: true, value: { status: 'IN_PROGRESS' } };
  if (body.status.id !== 'COMPLETED') return fail(`checkpoint status: unknown status '${body.status.id}'`);
  const op = body.operation;
  if (!isObj(op)) return fail('checkpoint status: a completed operation has no "operation"');
  // Real JobManagers (1.20, 2.3) write `failureCause`; Flink's REST reference names it `failure-cause`.
  const cause = op.failureCause ?? op['failure-cause'];
  if (cause !== undefined && cause !== null) return { ok: true, value: { status: 'FAILED', error: failureText(cause) } };
  const id = count(op.checkpointId);
  if (id === undefined) return fail('checkpoint status: operation.checkpointId is not a checkpoint id');
  return { ok: true, value: { status: 'COMPLETED', checkpointId: id } };
}

/** The first line of a SerializedThrowable's stack trace ("…CheckpointException: Checkpoint expired before completing."). */
function failureText(cause: unknown): string {
  if (isObj(cause) && typeof cause['stack-trace'] === 'string') return cause['stack-trace'].split('\n', 1)[0].trim();
  if (isObj(cause) && typeof cause.class === 'string') return cause.class;
  return 'the checkpoint failed';
}

export function parseVertexTaskManagers(body: unknown): Parsed<VertexTaskManager[]> {
  if (!isObj(body) || !Array.isArray(body.taskmanagers)) return fail('vertex taskmanagers: expected {"taskmanagers":[…]}');
  const out: VertexTaskManager[] = [];
  for (const [i, raw] of body.taskmanagers.entries()) {
    if (!isObj(raw) || typeof raw['taskmanager-id'] !== 'string') return fail(`vertex taskmanagers[${i}] lacks taskmanager-id`);
    const counts: Record<string, number> = {};
    const sc = raw['status-counts'];
    if (isObj(sc)) for (const [k, v] of Object.entries(sc)) if (count(v) !== undefined) counts[k] = count(v)!;
    out.push({ taskManagerId: raw['taskmanager-id'], statusCounts: counts });
  }
  return { ok: true, value: out };
}
