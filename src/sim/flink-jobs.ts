/**
 * The simulated Flink JobManager: one streaming job running on the simulated cluster's task-manager
 * containers, its exception history, and failure injection. No HTTP here (flink-routes.ts serves it).
 *
 * What it copies from Flink (JobExceptionsHandler, JobExceptionsInfoWithHistory, JobDetails):
 *  - the history keeps the newest `web.exception-history-size` (16) failures, newest first; one entry
 *    per failure handling (a restart): the root exception plus the concurrent ones of that restart;
 *  - a local failure names its task (`"Map (3/8)"`), its task manager's place as "<host>:<data port>"
 *    and, from 1.17, `taskManagerId` = the YARN container id; a global failure names none of them;
 *  - a task manager whose container dies surfaces as YarnResourceManagerDriver's diagnostics
 *    "Container <id> marked as failed. Exit code:<n>." (java.lang.Exception);
 *  - a JobManager failover starts with an empty history.
 */
import { createHash } from 'node:crypto';
import { Clock } from '../core/clock';
import { SimCluster } from './cluster';
import { SimFlinkRuntime, VERTEX_SOURCE } from './flink-runtime';

export type FlinkVersion = '1.16' | '1.18' | '1.19' | '2.0';
export const FLINK_VERSIONS: readonly FlinkVersion[] = ['1.16', '1.18', '1.19', '2.0'];

/** Flink's web.exception-history-size default. */
export const HISTORY_SIZE = 16;
/** The TM data port the simulated task managers report. */
export const DATA_PORT = 41235;

export interface SimException {
  exceptionName: string;
  stacktrace: string;
  timestamp: number;
  /** Absent for a global failure. */
  tm?: { taskName: string; containerId: string; host: string };
}

export interface SimHistoryEntry extends SimException {
  concurrent: SimException[];
}

export interface SimJob {
  jid: string;
  name: string;
  state: string;
  startTime: number;
  lastModification: number;
  history: SimHistoryEntry[];
  restarts: number;
}

export interface HostFailure {
  host: string;
  /** "java.io.IOException: No space left on device" (class, then the message). */
  exception?: string;
  /** The task managers' containers die with this status (YARN sees it complete). */
  exitStatus?: number;
}

export type InjectResult = { ok: true; entry: SimHistoryEntry; containers: string[] } | { ok: false; error: string };

function splitException(text: string): { name: string; stacktrace: string } {
  const first = text.split('\n', 1)[0];
  const name = /^([\w.$]+)(:|$)/.exec(first)?.[1] ?? 'java.lang.Exception';
  return { name, stacktrace: `${text}\n\tat org.apache.flink.sim.Task.run(Task.java:42)` };
}

export class SimFlink {
  version: FlinkVersion;
  readonly job: SimJob;
  /** GET /jobs/:jid/exceptions answered (tests check that an unchanged job is not re-read). */
  exceptionReads = 0;
  /** Slots, failovers and checkpoints (evacuations read them); absent: only the detector's face. */
  runtime: SimFlinkRuntime | undefined;
  private taskSeq = 0;

  constructor(
    private readonly cluster: SimCluster,
    private readonly clock: Clock,
    version: FlinkVersion = '1.18',
  ) {
    this.version = version;
    const now = clock.now();
    // A stable job id (32 hex digits, like Flink's JobID) derived from the application.
    const jid = createHash('md5').update(cluster.applicationId).digest('hex');
    this.job = { jid, name: 'orders', state: 'RUNNING', startTime: now, lastModification: now, history: [], restarts: 0 };
  }

  /** The task managers on a host fail in one restart (the root and its concurrent exceptions). */
  failHost(f: HostFailure): InjectResult {
    const node = this.cluster.node(f.host);
    if (!node) return { ok: false, error: `no node ${f.host}` };
    const tms = this.cluster.taskManagers().filter((c) => c.host === f.host);
    if (tms.length === 0) return { ok: false, error: `no task manager runs on ${f.host}` };
    const now = this.nextTimestamp();
    const excs = tms.map((c, i): SimException => {
      const text = f.exception ?? (f.exitStatus !== undefined ? `java.lang.Exception: Container ${c.id} marked as failed.\n Exit code:${f.exitStatus}.` : 'java.lang.RuntimeException: simulated task failure');
      const { name, stacktrace } = splitException(text);
      return { exceptionName: name, stacktrace, timestamp: now + i, tm: { taskName: this.taskName(), containerId: c.id, host: c.host } };
    });
    if (f.exitStatus !== undefined) for (const c of tms) this.cluster.killContainer(c.id, f.exitStatus);
    const entry: SimHistoryEntry = { ...excs[0], concurrent: excs.slice(1) };
    this.record(entry);
    return { ok: true, entry, containers: tms.map((c) => c.id) };
  }

  /** One exception on one task manager of each of these hosts, in one restart: the job's own bug. */
  failJobWide(hosts: string[], exception: string): InjectResult {
    const excs: SimException[] = [];
    const now = this.nextTimestamp();
    const { name, stacktrace } = splitException(exception);
    for (const h of hosts) {
      const tm = this.cluster.taskManagers().find((c) => c.host === h);
      if (!tm) return { ok: false, error: `no task manager runs on ${h}` };
      excs.push({ exceptionName: name, stacktrace, timestamp: now + excs.length, tm: { taskName: this.taskName(), containerId: tm.id, host: h } });
    }
    if (excs.length === 0) return { ok: false, error: 'no hosts' };
    const entry: SimHistoryEntry = { ...excs[0], concurrent: excs.slice(1) };
    this.record(entry);
    return { ok: true, entry, containers: excs.map((e) => e.tm!.containerId) };
  }

  /** A failure with no task manager (e.g. too many failed checkpoints). */
  failGlobal(exception: string): InjectResult {
    const { name, stacktrace } = splitException(exception);
    const entry: SimHistoryEntry = { exceptionName: name, stacktrace, timestamp: this.nextTimestamp(), concurrent: [] };
    this.record(entry);
    return { ok: true, entry, containers: [] };
  }

  /** Hosts running at least one task manager, sorted. */
  hostsWithTaskManagers(): string[] {
    return [...new Set(this.cluster.taskManagers().map((c) => c.host))].sort();
  }

  /** A JobManager failover: the exception history lives in its memory and starts empty. */
  failover(): void {
    this.job.history = [];
    this.job.lastModification = this.clock.now();
  }

  /** Failure handlings are sequential in a JobManager: each restart gets a later timestamp than the last. */
  private nextTimestamp(): number {
    const last = this.job.history[0];
    const floor = last ? Math.max(last.timestamp, ...last.concurrent.map((c) => c.timestamp)) + 1 : 0;
    return Math.max(this.clock.now(), floor);
  }

  private taskName(): string {
    const i = this.taskSeq++ % 8;
    return `Map (${i + 1}/8)`;
  }

  private record(entry: SimHistoryEntry): void {
    this.job.history.unshift(entry);
    if (this.job.history.length > HISTORY_SIZE) this.job.history.length = HISTORY_SIZE;
    this.job.restarts++;
    this.job.lastModification = this.clock.now();
    this.job.state = 'RUNNING';
  }

  // ---- the REST shapes -------------------------------------------------------------------------

  overview(): unknown {
    const j = this.job;
    const n = this.cluster.taskManagerCount;
    const rt = this.runtime;
    const tasks = rt ? rt.tasks() : { total: n, created: 0, scheduled: 0, deploying: 0, running: n, finished: 0, canceling: 0, canceled: 0, failed: 0, reconciling: 0, initializing: 0 };
    return {
      jobs: [
        {
          jid: j.jid,
          name: j.name,
          ...(this.version === '2.0' && rt ? { jobType: rt.type } : {}),
          'start-time': j.startTime,
          'end-time': -1,
          duration: this.clock.now() - j.startTime,
          state: rt ? rt.state : j.state,
          'last-modification': j.lastModification,
          tasks,
          ...(this.version === '2.0' ? { 'pending-operators': 0 } : {}),
        },
      ],
    };
  }

  // ---- the evacuation's endpoints (they need the runtime) -------------------------------------

  taskManagersBody(): unknown {
    const tms = this.runtime?.taskManagers() ?? this.cluster.taskManagers().map((c) => ({ id: c.id, slots: 1, free: 0 }));
    return {
      taskmanagers: tms.map((t, i) => ({
        id: t.id,
        path: `pekko.tcp://flink@${this.cluster.container(t.id)?.host ?? 'localhost'}:36119/user/rpc/taskmanager_${i}`,
        dataPort: DATA_PORT,
        jmxPort: -1,
        timeSinceLastHeartbeat: this.clock.now(),
        slotsNumber: t.slots,
        freeSlots: t.free,
        ...(this.version === '2.0' ? { assignedTasks: t.slots - t.free } : {}),
      })),
    };
  }

  /** GET /jobs/:jid (JobDetailsInfo): `job-type` from 1.19; the plan names each vertex's inputs. */
  jobBody(): unknown {
    const rt = this.runtime;
    const vertices = rt?.vertices() ?? [{ id: VERTEX_SOURCE, name: 'Source: orders -> Map -> Sink', status: this.job.state, inputs: [] }];
    const type = rt?.type ?? 'STREAMING';
    const withType = this.version === '1.19' || this.version === '2.0';
    return {
      jid: this.job.jid,
      name: this.job.name,
      isStoppable: false,
      state: rt ? rt.state : this.job.state,
      ...(withType ? { 'job-type': type } : {}),
      'start-time': this.job.startTime,
      'end-time': -1,
      now: this.clock.now(),
      vertices: vertices.map((v) => ({ id: v.id, name: v.name, parallelism: rt?.parallelism ?? 1, status: v.status })),
      plan: { jid: this.job.jid, name: this.job.name, type, nodes: vertices.map((v) => ({ id: v.id, parallelism: rt?.parallelism ?? 1, operator: '', description: v.name, ...(v.inputs.length ? { inputs: v.inputs.map((id, num) => ({ id, num, exchange: type === 'BATCH' ? 'blocking' : 'pipelined_bounded', ship_strategy: 'HASH' })) } : {}) })) },
    };
  }

  /** GET /jobs/:jid/checkpoints/config: 404 when the job takes no checkpoints (CheckpointConfigHandler). */
  checkpointConfigBody(): { status: number; body: unknown } {
    const interval = this.runtime?.opts.type === 'STREAMING' ? this.runtime.opts.checkpointIntervalMs : undefined;
    if (interval === undefined) return { status: 404, body: { errors: [`org.apache.flink.runtime.rest.handler.RestHandlerException: Checkpointing is not enabled for this job (${this.job.jid}).`] } };
    return { status: 200, body: { mode: 'exactly_once', interval, timeout: 600_000, min_pause: 0, max_concurrent: 1, externalization: { enabled: false, delete_on_cancellation: true }, unaligned_checkpoints: false } };
  }

  checkpointsBody(): unknown {
    const latest = this.runtime?.latestCheckpoint();
    const completed = latest ? { className: 'completed', id: latest.id, status: 'COMPLETED', is_savepoint: false, trigger_timestamp: latest.at, latest_ack_timestamp: latest.at + 20, checkpoint_type: 'CHECKPOINT', discarded: false } : null;
    return { counts: { restored: 0, total: latest?.id ?? 0, in_progress: 0, completed: latest?.id ?? 0, failed: 0 }, summary: {}, latest: { completed, savepoint: null, failed: null, restored: null }, history: completed ? [completed] : [] };
  }

  /** GET /jobs/:jid/checkpoints/:triggerid (CheckpointStatusHandler): undefined for an unknown trigger. */
  triggerBody(triggerId: string): unknown {
    const t = this.runtime?.triggered(triggerId);
    if (!t) return undefined;
    if (!t.result) return { status: { id: 'IN_PROGRESS' } };
    if (t.result.status === 'COMPLETED') return { status: { id: 'COMPLETED' }, operation: { checkpointId: t.result.checkpointId } };
    return { status: { id: 'COMPLETED' }, operation: { 'failure-cause': { class: 'org.apache.flink.runtime.checkpoint.CheckpointException', 'stack-trace': `${t.result.error}\n\tat org.apache.flink.sim.Checkpoint.run(Checkpoint.java:1)`, 'serialized-throwable': '' } } };
  }

  restartsBody(): unknown {
    return [{ id: 'numRestarts', value: String(this.runtime?.restarts ?? this.job.restarts) }];
  }

  vertexTaskManagersBody(vertexId: string): unknown {
    const v = this.runtime?.vertices().find((x) => x.id === vertexId);
    if (!v) return undefined;
    return { id: v.id, name: v.name, now: this.clock.now(), taskmanagers: (this.runtime?.vertexTaskManagers(vertexId) ?? []).map((tm) => ({ endpoint: `${this.cluster.container(tm)?.host ?? 'localhost'}:${DATA_PORT}`, status: v.status, 'taskmanager-id': tm, 'status-counts': { [v.status]: 1 } })) };
  }

  /** GET /jobs/:jid/exceptions in the selected version's shape. */
  exceptions(maxExceptions: number): unknown {
    this.exceptionReads++;
    const all = this.job.history;
    const shown = all.slice(0, maxExceptions);
    const v = this.version;
    const one = (e: SimException, withConcurrent?: SimException[]): Record<string, unknown> => {
      const o: Record<string, unknown> = { exceptionName: e.exceptionName, stacktrace: e.stacktrace, timestamp: e.timestamp };
      if (v !== '1.16') o.failureLabels = {};
      if (e.tm) {
        const place = `${e.tm.host}:${DATA_PORT}`;
        o.taskName = e.tm.taskName;
        if (v !== '2.0') o.location = place;
        if (v === '1.19' || v === '2.0') o.endpoint = place;
        if (v !== '1.16') o.taskManagerId = e.tm.containerId;
      }
      if (withConcurrent) o.concurrentExceptions = withConcurrent.map((c) => one(c));
      return o;
    };
    const body: Record<string, unknown> = { exceptionHistory: { entries: shown.map((e) => one(e, e.concurrent)), truncated: shown.length < all.length } };
    if (v !== '2.0') {
      // The deprecated first-level members of 1.x.
      const root = all[0];
      body['root-exception'] = root ? root.stacktrace : null;
      body.timestamp = root ? root.timestamp : null;
      body['all-exceptions'] = (root ? [root, ...root.concurrent] : []).map((e) => ({
        exception: e.stacktrace,
        task: e.tm?.taskName ?? '(unassigned)',
        location: e.tm ? `${e.tm.host}:${DATA_PORT}` : '(unassigned)',
        timestamp: e.timestamp,
        ...(v !== '1.16' && e.tm ? { taskManagerId: e.tm.containerId } : {}),
      }));
      body.truncated = false;
    }
    return body;
  }

  config(): unknown {
    const full = { '1.16': '1.16.3', '1.18': '1.18.1', '1.19': '1.19.1', '2.0': '2.0.0' }[this.version];
    return { 'refresh-interval': 3000, 'timezone-name': 'Coordinated Universal Time', 'timezone-offset': 0, 'flink-version': full, 'flink-revision': 'sim', features: { 'web-submit': false, 'web-cancel': false, 'web-history': false } };
  }
}
