/**
 * The Flink JobManager REST client of evacuations (types.ts FlinkJobManager over HTTP). Flink on
 * YARN binds its REST port at random; locate.ts finds the address. An address behind the RM's web
 * proxy passes GET only (Hadoop's WebAppProxyServlet has no doPost): such a client says it cannot
 * POST, and checkpoints are then awaited rather than triggered.
 */
import * as https from 'node:https';
import { Clock } from '../core/clock';
import { excerpt, tryParseJson } from '../yarn/http-errors';
import { PeerFailure, PeerHttp } from '../yarn/peer-http';
import {
  Parsed,
  parseCheckpointConfig,
  parseFlinkVersion,
  parseJobDetail,
  parseJobs,
  parseLatestCheckpoint,
  parseRestarts,
  parseTaskManagers,
  parseTriggerId,
  parseTriggeredCheckpoint,
  parseVertexTaskManagers,
} from './json';
import { CheckpointConfig, CompletedCheckpoint, FlinkCallError, FlinkJobDetail, FlinkJobManager, FlinkJobSummary, FlinkTaskManager, TriggeredCheckpoint, VertexTaskManager } from './types';

export interface FlinkClientOptions {
  /** `http(s)://host:port`, or the RM's proxy URL of the application (`…/proxy/<appId>/`). */
  baseUrl: string;
  /** Whether POST reaches the JobManager (false behind the RM's web proxy). */
  canPost: boolean;
  /** The whole call's deadline (yarn.request-timeout), on `clock`. */
  timeoutMs?: number;
  /** Largest answer read (detector.flink.max-answer-size: the JobManager's bound, shared with the detector). */
  maxAnswerBytes?: number;
  clock?: Clock;
  httpsAgent?: https.Agent;
  onFailure?: (failure: PeerFailure) => void;
}

/** The JobManager's answers share the detector's bound (a job's details with its plan are the largest, tens of KB). */
export const FLINK_MAX_ANSWER_BYTES = 16 * 1024 * 1024;
export const FLINK_MAX_ANSWER_KEY = 'cluster.resource-blocklist.detector.flink.max-answer-size';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class FlinkRestClient implements FlinkJobManager {
  readonly baseUrl: string;
  readonly canPost: boolean;
  private readonly http: PeerHttp;

  constructor(opts: FlinkClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.canPost = opts.canPost;
    this.http = new PeerHttp({
      baseURL: this.baseUrl,
      limits: { deadlineMs: opts.timeoutMs ?? 10_000, deadlineKey: 'cluster.resource-blocklist.yarn.request-timeout', maxBytes: opts.maxAnswerBytes ?? FLINK_MAX_ANSWER_BYTES, maxBytesKey: FLINK_MAX_ANSWER_KEY },
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.onFailure ? { onFailure: opts.onFailure } : {}),
      ...(opts.httpsAgent ? { httpsAgent: opts.httpsAgent } : {}),
    });
  }

  async version(): Promise<string | undefined> {
    return parseFlinkVersion(await this.call('GET', '/config'));
  }

  async taskManagers(): Promise<FlinkTaskManager[]> {
    return this.parsed(parseTaskManagers(await this.call('GET', '/taskmanagers')));
  }

  async jobs(): Promise<FlinkJobSummary[]> {
    return this.parsed(parseJobs(await this.call('GET', '/jobs/overview')));
  }

  async job(jid: string): Promise<FlinkJobDetail> {
    return this.parsed(parseJobDetail(await this.call('GET', `/jobs/${jid}`), jid));
  }

  /** A job without checkpointing answers 404 "Checkpointing is not enabled for this job": no periodic checkpoints. */
  async checkpointConfig(jid: string): Promise<CheckpointConfig> {
    try {
      return this.parsed(parseCheckpointConfig(await this.call('GET', `/jobs/${jid}/checkpoints/config`)));
    } catch (e) {
      if (e instanceof FlinkCallError && e.status === 404 && /not enabled/i.test(e.message)) return {};
      throw e;
    }
  }

  async latestCheckpoint(jid: string): Promise<CompletedCheckpoint | undefined> {
    return this.parsed(parseLatestCheckpoint(await this.call('GET', `/jobs/${jid}/checkpoints`)));
  }

  async restarts(jid: string): Promise<number | undefined> {
    return this.parsed(parseRestarts(await this.call('GET', `/jobs/${jid}/metrics?get=numRestarts`)));
  }

  async triggerCheckpoint(jid: string): Promise<string> {
    if (!this.canPost) throw new FlinkCallError(`${this.baseUrl} is the RM's web proxy, which passes no POST: a checkpoint cannot be triggered through it`);
    return this.parsed(parseTriggerId(await this.call('POST', `/jobs/${jid}/checkpoints`, {})));
  }

  async triggeredCheckpoint(jid: string, triggerId: string): Promise<TriggeredCheckpoint> {
    return this.parsed(parseTriggeredCheckpoint(await this.call('GET', `/jobs/${jid}/checkpoints/${encodeURIComponent(triggerId)}`)));
  }

  async vertexTaskManagers(jid: string, vertexId: string): Promise<VertexTaskManager[]> {
    return this.parsed(parseVertexTaskManagers(await this.call('GET', `/jobs/${jid}/vertices/${vertexId}/taskmanagers`)));
  }

  private parsed<T>(p: Parsed<T>): T {
    if (!p.ok) throw new FlinkCallError(`Flink ${this.baseUrl}: ${p.error}`);
    return p.value;
  }

  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const what = `Flink JobManager ${method} ${path}`;
    let res;
    try {
      res = await this.http.request({ what, method, url: path, ...(body !== undefined ? { body } : {}) });
    } catch (e) {
      throw new FlinkCallError(e instanceof Error ? e.message : String(e));
    }
    const parsed = tryParseJson(res.text);
    if (res.status < 200 || res.status >= 300) {
      const errs = isObj(parsed) && Array.isArray(parsed.errors) ? parsed.errors.map(String).join('; ') : excerpt(res.text) || '(empty body)';
      throw new FlinkCallError(`${what}: ${res.status} ${errs}`, res.status);
    }
    if (parsed === undefined) throw new FlinkCallError(`${what}: the answer is not JSON: ${excerpt(res.text)}`);
    return parsed;
  }
}
