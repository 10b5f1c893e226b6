/**
 * Source: Flink's JobManager REST API. `GET /jobs/overview`, then `GET /jobs/{jid}/exceptions` for
 * jobs whose state or last-modification moved (or that are restarting). Every local failure in the
 * exception history — the root of a restart and its concurrent exceptions — is attributed to a host
 * through its `taskManagerId` (the YARN container id) and the container's node; only when the
 * container is unknown does the host part of `endpoint`/`location` count, and only if the RM knows
 * a node by that name. Global failures (no task manager) are never attributed.
 *
 * The JobManager keeps only the newest `web.exception-history-size` (16) failures: when a read
 * holds none of the entries seen before and the history is full, the ones in between were lost;
 * that is logged and counted (blocklist_detector_missed_total{source="flink"}).
 */
import * as https from 'node:https';
import { Clock } from '../../core/clock';
import { excerpt, tryParseJson } from '../../yarn/http-errors';
import { PeerFailure, PeerHttp, PeerLimits } from '../../yarn/peer-http';
import { parseContainerId } from '../../model/ids';
import { FlinkException, FlinkHistoryEntry, parseExceptions, parseJobsOverview, signatureOf } from '../flink-json';
import { DetectorSource, SourceContext, SourceReport } from '../source';
import { JsonValue } from '../state';
import { Failure } from '../types';

export interface FlinkRestSourceOptions {
  /** http://host:port of the JobManager's REST endpoint. */
  address: string;
  /** Deadline of each call, connect to last byte, ms. */
  timeoutMs?: number;
  /** Largest answer accepted (a job's exception history: stack traces), bytes; default FLINK_MAX_ANSWER_BYTES. */
  maxAnswerBytes?: number;
  clock?: Clock;
  /** Told of every call that got no complete answer, by kind (a metric). */
  onFailure?: (failure: PeerFailure) => void;
  httpsAgent?: https.Agent;
  /** What the JobManager keeps (web.exception-history-size); a full history may hide entries. */
  historySize?: number;
}

/** Per job: the overview fields last read, and the newest failure seen. */
interface JobCursor {
  lm: number;
  state: string;
  newest: number;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function readCursor(c: JsonValue | undefined): Record<string, JobCursor> {
  const out: Record<string, JobCursor> = {};
  if (!isObj(c) || !isObj(c.jobs)) return out;
  for (const [jid, v] of Object.entries(c.jobs)) {
    if (isObj(v) && typeof v.lm === 'number' && typeof v.state === 'string' && typeof v.newest === 'number') out[jid] = { lm: v.lm, state: v.state, newest: v.newest };
  }
  return out;
}
const ACTIVE = new Set(['RESTARTING', 'FAILING', 'INITIALIZING']);

/**
 * A job's exception history is the JobManager's biggest answer: up to 16 entries, each a root
 * failure with its concurrent ones, each with a stack trace of a few to tens of kilobytes.
 */
export const FLINK_MAX_ANSWER_BYTES = 16 * 1024 * 1024;
export const FLINK_MAX_ANSWER_KEY = 'cluster.resource-blocklist.detector.flink.max-answer-size';
/** GET /config: a few hundred bytes. */
const CONFIG_MAX_BYTES = 64 * 1024;

export class FlinkRestSource implements DetectorSource {
  readonly name = 'flink';
  readonly baseUrl: string;
  private readonly http: PeerHttp;
  private readonly configLimits: PeerLimits;
  private readonly historySize: number;
  /** The Flink version the JobManager reports (for GET /detector), once read. */
  flinkVersion: string | undefined;

  constructor(opts: FlinkRestSourceOptions) {
    const a = opts.address.trim();
    const withScheme = /^https?:\/\//i.test(a) ? a : `http://${a}`;
    const u = new URL(withScheme);
    this.baseUrl = `${u.protocol}//${u.host}`;
    this.historySize = opts.historySize ?? 16;
    const deadline = { deadlineMs: opts.timeoutMs ?? 10_000, deadlineKey: 'cluster.resource-blocklist.yarn.request-timeout' };
    this.configLimits = { ...deadline, maxBytes: CONFIG_MAX_BYTES };
    this.http = new PeerHttp({
      baseURL: this.baseUrl,
      limits: { ...deadline, maxBytes: opts.maxAnswerBytes ?? FLINK_MAX_ANSWER_BYTES, maxBytesKey: FLINK_MAX_ANSWER_KEY },
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.onFailure ? { onFailure: opts.onFailure } : {}),
      ...(opts.httpsAgent ? { httpsAgent: opts.httpsAgent } : {}),
    });
  }

  async poll(ctx: SourceContext): Promise<SourceReport> {
    if (this.flinkVersion === undefined) {
      const cfg = await this.get('/config', this.configLimits).catch(() => undefined);
      if (isObj(cfg) && typeof cfg['flink-version'] === 'string') this.flinkVersion = cfg['flink-version'];
    }
    const jobs = parseJobsOverview(await this.get('/jobs/overview'));
    if (!jobs.ok) throw new Error(`Flink ${this.baseUrl}: ${jobs.error}`);
    const before = readCursor(ctx.cursor);
    const after: Record<string, JobCursor> = {};
    const failures: Failure[] = [];
    let unattributed = 0;
    for (const job of jobs.value) {
      const prev = before[job.jid];
      const cur: JobCursor = { lm: job.lastModification, state: job.state, newest: prev?.newest ?? 0 };
      after[job.jid] = cur;
      if (prev && prev.lm === job.lastModification && prev.state === job.state && !ACTIVE.has(job.state)) continue;
      const ex = parseExceptions(await this.get(`/jobs/${job.jid}/exceptions?maxExceptions=${this.historySize}`));
      if (!ex.ok) throw new Error(`Flink ${this.baseUrl} job ${job.jid}: ${ex.error}`);
      const entries = ex.value.entries;
      if (entries.length > 0) {
        const oldest = Math.min(...entries.map((e) => e.timestamp));
        const newest = Math.max(...entries.map((e) => e.timestamp));
        if (prev && prev.newest > 0 && oldest > prev.newest && (ex.value.truncated || entries.length >= this.historySize)) {
          ctx.missed(1, `Flink job ${job.jid}: the JobManager's exception history (it keeps ${this.historySize}) no longer holds the failures between ${new Date(prev.newest).toISOString()} and ${new Date(oldest).toISOString()}; they were not counted — poll more often (cluster.resource-blocklist.detector.poll-interval)`);
        }
        cur.newest = Math.max(cur.newest, newest);
      }
      for (const entry of entries) {
        const r = attributeEntry(job.jid, entry, ctx);
        failures.push(...r.failures);
        unattributed += r.unattributed;
      }
    }
    return { failures, unattributed, cursor: { jobs: after as unknown as JsonValue } };
  }

  private async get(path: string, limits?: PeerLimits): Promise<unknown> {
    const what = `Flink JobManager GET ${path}`;
    const res = await this.http.request({ what, url: path, ...(limits ? { limits } : {}) });
    const body = tryParseJson(res.text);
    if (res.status < 200 || res.status >= 300) {
      const errs = isObj(body) && Array.isArray(body.errors) ? body.errors.join('; ') : excerpt(res.text);
      throw new Error(`${what}: ${res.status} ${errs}`);
    }
    return body;
  }
}

/**
 * The failures of one history entry (one failure handling): the root and its concurrent exceptions,
 * each on the host of its task manager. A global root (no task manager: checkpointing, or Flink's
 * final "Recovery is suppressed") is never attributed, but the task failures it carries as
 * concurrent exceptions are.
 */
export function attributeEntry(jid: string, entry: FlinkHistoryEntry, ctx: Pick<SourceContext, 'hostOfContainer' | 'isKnownHost'>): { failures: Failure[]; unattributed: number } {
  const failures: Failure[] = [];
  let unattributed = entry.global ? 1 : 0;
  const group = `flink:${jid}:${entry.timestamp}`;
  for (const e of entry.global ? entry.concurrent : [entry, ...entry.concurrent]) {
    const host = hostOf(e, ctx);
    if (host === undefined) {
      unattributed++;
      continue;
    }
    const f: Failure = {
      key: `flink:${jid}:${e.timestamp}:${e.exceptionName}:${e.taskManagerId ?? e.host ?? ''}:${e.taskName ?? ''}`,
      source: 'flink',
      host,
      at: e.timestamp,
      group,
      signature: signatureOf(e.exceptionName, e.message),
      summary: e.message.length > 160 ? `${e.message.slice(0, 159)}…` : e.message,
      job: jid,
    };
    if (e.taskManagerId !== undefined && parseContainerId(e.taskManagerId).ok) f.containerId = e.taskManagerId;
    failures.push(f);
  }
  return { failures, unattributed };
}

/** taskManagerId → the container's node; else endpoint/location's host if the RM knows it. */
function hostOf(e: FlinkException, ctx: Pick<SourceContext, 'hostOfContainer' | 'isKnownHost'>): string | undefined {
  if (e.taskManagerId !== undefined) {
    const h = ctx.hostOfContainer(e.taskManagerId);
    if (h !== undefined) return h;
  }
  if (e.host !== undefined && ctx.isKnownHost(e.host)) return e.host;
  return undefined;
}
