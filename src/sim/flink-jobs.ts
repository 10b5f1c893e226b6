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
    return {
      jobs: [
        {
          jid: j.jid,
          name: j.name,
          'start-time': j.startTime,
          'end-time': -1,
          duration: this.clock.now() - j.startTime,
          state: j.state,
          'last-modification': j.lastModification,
          tasks: { total: n, created: 0, scheduled: 0, deploying: 0, running: n, finished: 0, canceling: 0, canceled: 0, failed: 0, reconciling: 0, initializing: 0 },
          ...(this.version === '2.0' ? { 'pending-operators': 0 } : {}),
        },
      ],
    };
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
