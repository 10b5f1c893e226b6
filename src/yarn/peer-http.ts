/**
 * The one way the sidecar calls a peer over HTTP (the RM, the AMRM proxy, Flink's JobManager):
 * every call has a total deadline and a bounded answer, besides the idle timeout.
 *
 * An idle timeout alone lets a peer that trickles its answer (a byte every few seconds) hold a call
 * forever, and an unbounded body lets one answer take the process's memory: both wedged the sync
 * engine without an error. Here the deadline runs on the injected Clock from the moment the
 * request is made to the last byte of the answer; the body is counted as it arrives (decoded
 * bytes, after gzip) and the call ends at the first byte past the bound, so the process never holds
 * more than the bound of one answer. Redirects are not followed (the RM client follows a standby's
 * 307 itself) and every status is returned: the caller maps it.
 */
import axios, { AxiosError, AxiosInstance, AxiosResponse, isAxiosError } from 'axios';
import * as https from 'node:https';
import { Clock, systemClock } from '../core/clock';
import { isConnectionCode } from './http-errors';
import { YarnCallError } from './types';

/** The limits of one call. */
export interface PeerLimits {
  /** The whole call, request made to last byte received, ms. */
  deadlineMs: number;
  /** No byte for this long (connecting, or between chunks) ends the call, ms; default deadlineMs. */
  idleMs?: number;
  /** Largest answer body accepted, bytes (decoded). */
  maxBytes: number;
  /** The configuration key an operator raises when a real answer needs more (named in the error). */
  maxBytesKey?: string;
  /** The key of the deadline (named in the error). */
  deadlineKey?: string;
}

export interface PeerHttpOptions {
  /** base URL every request path is resolved against; absent: requests carry absolute URLs. */
  baseURL?: string;
  httpsAgent?: https.Agent;
  /** Times the deadline (a FakeClock in tests). */
  clock?: Clock;
  limits: PeerLimits;
  /** Told of every call that got no complete answer (a metric counts them by kind). */
  onFailure?: (failure: PeerFailure) => void;
}

export interface PeerRequest {
  /** For messages: `RM GET /ws/v1/cluster/nodes`. */
  what: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** A path under baseURL, or an absolute URL. */
  url: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** The body as bytes (default: text). */
  bytes?: boolean;
  /** This endpoint's own limits instead of the client's (an endpoint whose real answers are small is bounded tighter). */
  limits?: PeerLimits;
}

export interface PeerAnswer {
  status: number;
  /** Header names in lower case; a repeated header joined with ', '. */
  headers: Readonly<Record<string, string>>;
  /** The body as text ('' when `bytes` was asked for). */
  text: string;
  /** The body as bytes, when `bytes` was asked for. */
  raw?: Buffer;
}

/**
 * Why no answer came: `connection` (refused, reset, DNS: another RM of an HA list may answer),
 * `transport` (anything else before an answer, e.g. a certificate refused), `idle` (no byte for
 * idleMs), `deadline` (the answer did not complete in time), `too-large`.
 */
export type PeerFailure = 'connection' | 'transport' | 'idle' | 'deadline' | 'too-large';

export class PeerCallError extends YarnCallError {
  constructor(
    message: string,
    readonly failure: PeerFailure,
  ) {
    // A body past its bound will be as big next time: retrying cannot help until the key is raised.
    super(message, undefined, failure !== 'too-large');
    this.name = 'PeerCallError';
  }
}

/** Whether another address (an HA peer) may answer where this one failed. */
export function triesElsewhere(e: unknown): boolean {
  return e instanceof PeerCallError && (e.failure === 'connection' || e.failure === 'idle' || e.failure === 'deadline');
}

/** Bytes as operators read them: 32 MiB, 4 KiB, 900 B. */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} B`;
}

/** The error for an answer past its bound (also used by the node-list worker's reply). */
export function tooLargeError(what: string, url: string, limits: Pick<PeerLimits, 'maxBytes' | 'maxBytesKey'>): PeerCallError {
  const key = limits.maxBytesKey ? `; raise ${limits.maxBytesKey} if a real answer needs more` : '';
  return new PeerCallError(`${what}: the answer of ${url} is larger than ${formatBytes(limits.maxBytes)} (the bound of this call${key}); it was not read further`, 'too-large');
}

/** The error for an answer that did not complete within the deadline (`received`: body bytes by then, when known). */
export function deadlineError(what: string, url: string, limits: Pick<PeerLimits, 'deadlineMs' | 'deadlineKey'>, received?: number): PeerCallError {
  const key = limits.deadlineKey ? ` (${limits.deadlineKey})` : '';
  if (received === 0) return new PeerCallError(`${what}: no answer from ${url} within ${limits.deadlineMs} ms${key}`, 'deadline');
  if (received === undefined) return new PeerCallError(`${what}: no complete answer from ${url} within ${limits.deadlineMs} ms${key}; the call was abandoned`, 'deadline');
  return new PeerCallError(`${what}: ${url} did not complete its answer within ${limits.deadlineMs} ms${key}: ${received} bytes of it in that time; the call was abandoned`, 'deadline');
}

/** The error for a peer that sent nothing for idleMs. */
export function idleError(what: string, url: string, idleMs: number): PeerCallError {
  return new PeerCallError(`${what}: no answer from ${url} within ${idleMs} ms`, 'idle');
}

/** Refused, reset, DNS…: `connection` for the codes in CONNECTION_CODES (and none), else `transport`. */
export function unreachableError(what: string, url: string, code: string | undefined, message: string): PeerCallError {
  return new PeerCallError(`${what}: cannot reach ${url}${code ? ` (${code})` : ''}: ${message}`, isConnectionCode(code) ? 'connection' : 'transport');
}

const DEADLINE = Symbol('deadline');

export class PeerHttp {
  private readonly http: AxiosInstance;
  private readonly clock: Clock;
  readonly limits: PeerLimits;

  constructor(private readonly opts: PeerHttpOptions) {
    this.clock = opts.clock ?? systemClock;
    this.limits = opts.limits;
    this.http = axios.create({
      ...(opts.baseURL ? { baseURL: opts.baseURL } : {}),
      maxRedirects: 0,
      validateStatus: () => true,
      responseType: 'text',
      transformResponse: [(d: unknown) => d],
      headers: { Accept: 'application/json' },
      ...(opts.httpsAgent ? { httpsAgent: opts.httpsAgent } : {}),
    });
  }

  /** The URL a request goes to, for messages. */
  urlOf(url: string): string {
    return /^https?:\/\//i.test(url) || !this.opts.baseURL ? url : this.opts.baseURL + url;
  }

  /** One request. Throws PeerCallError when no complete answer within the limits came; any status is an answer. */
  async request(r: PeerRequest): Promise<PeerAnswer> {
    const limits = r.limits ?? this.limits;
    const idleMs = limits.idleMs ?? limits.deadlineMs;
    const abort = new AbortController();
    const cancel = this.clock.setTimer(limits.deadlineMs, () => abort.abort(DEADLINE));
    let received = 0;
    let res: AxiosResponse<unknown>;
    try {
      res = await this.http.request<unknown>({
        method: r.method ?? 'GET',
        url: r.url,
        ...(r.body !== undefined ? { data: r.body } : {}),
        headers: { ...(r.body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...r.headers },
        timeout: idleMs,
        maxContentLength: limits.maxBytes,
        signal: abort.signal,
        onDownloadProgress: (p) => {
          received = p.loaded;
        },
        ...(r.bytes ? { responseType: 'arraybuffer' as const } : {}),
      });
    } catch (e) {
      const failure = this.failure(r.what, this.urlOf(r.url), e, limits, idleMs, abort.signal.reason === DEADLINE ? received : undefined);
      this.opts.onFailure?.(failure.failure);
      throw failure;
    } finally {
      cancel();
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers as Record<string, unknown>)) {
      if (typeof v === 'string') headers[k.toLowerCase()] = v;
      else if (Array.isArray(v)) headers[k.toLowerCase()] = v.join(', ');
      else if (typeof v === 'number') headers[k.toLowerCase()] = String(v);
    }
    if (Buffer.isBuffer(res.data)) return { status: res.status, headers, text: '', raw: res.data };
    return { status: res.status, headers, text: typeof res.data === 'string' ? res.data : '' };
  }

  /** `pastDeadline`: the body bytes received when the deadline passed (undefined: it did not). */
  private failure(what: string, url: string, e: unknown, limits: PeerLimits, idleMs: number, pastDeadline: number | undefined): PeerCallError {
    if (pastDeadline !== undefined) return deadlineError(what, url, limits, pastDeadline);
    if (isAxiosError(e) && /maxContentLength/.test(e.message)) return tooLargeError(what, url, limits);
    if (isAxiosError(e) && !e.response && (e.code === AxiosError.ECONNABORTED || e.code === AxiosError.ETIMEDOUT || /timeout/i.test(e.message))) return idleError(what, url, idleMs);
    const code = isAxiosError(e) && e.code ? e.code : undefined;
    return unreachableError(what, url, code, e instanceof Error ? e.message : String(e));
  }
}
