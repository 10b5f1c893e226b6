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
 *
 * On node:http, not axios: in Flink's AM container every MB of the sidecar counts against the
 * container's size, and loading axios (its http2, form-data and, through its fetch adapter's probe
 * at load time, Node's web Request/Response) kept ~5 MB more resident for features these calls never
 * use (docs/benchmarks.md, am-footprint). The CLI, a short-lived process, keeps axios.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { Readable } from 'node:stream';
import * as zlib from 'node:zlib';
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

/**
 * A peer's address as configured, `host:port` or `http(s)://host:port`, as a URL; `empty` and
 * `notAnAddress` are the errors (non-retriable) for a blank one and one that is no address.
 */
export function peerAddress(address: string, empty: string, notAnAddress: string): URL {
  const a = address.trim();
  if (a === '') throw new YarnCallError(empty, undefined, false);
  try {
    return new URL(/^https?:\/\//i.test(a) ? a : `http://${a}`);
  } catch {
    throw new YarnCallError(notAnAddress, undefined, false);
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

/** The answer's body decoded as its Content-Encoding says (Accept-Encoding asks for these only). */
function decoded(res: http.IncomingMessage): Readable {
  switch ((res.headers['content-encoding'] ?? '').trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return res.pipe(zlib.createGunzip());
    case 'deflate':
      return res.pipe(zlib.createInflate());
    default:
      return res;
  }
}

/** Header names in lower case, repeated ones joined (node:http gives arrays for a few). */
function headersOf(res: http.IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) {
    if (typeof v === 'string') out[k] = v;
    else if (Array.isArray(v)) out[k] = v.join(', ');
  }
  return out;
}

/** How one call ended, before it becomes an answer or a PeerCallError. */
type Outcome = { kind: 'answer'; answer: PeerAnswer } | { kind: 'failed'; error: PeerCallError };

export class PeerHttp {
  private readonly clock: Clock;
  readonly limits: PeerLimits;

  constructor(private readonly opts: PeerHttpOptions) {
    this.clock = opts.clock ?? systemClock;
    this.limits = opts.limits;
  }

  /** The URL a request goes to, for messages. */
  urlOf(url: string): string {
    return /^https?:\/\//i.test(url) || !this.opts.baseURL ? url : this.opts.baseURL + url;
  }

  /** One request. Throws PeerCallError when no complete answer within the limits came; any status is an answer. */
  async request(r: PeerRequest): Promise<PeerAnswer> {
    const outcome = await this.exchange(r, r.limits ?? this.limits);
    if (outcome.kind === 'answer') return outcome.answer;
    this.opts.onFailure?.(outcome.error.failure);
    throw outcome.error;
  }

  /** The call on node:http: the deadline on the injected clock, the idle timeout on the socket, the body counted as it is decoded. */
  private exchange(r: PeerRequest, limits: PeerLimits): Promise<Outcome> {
    const url = this.urlOf(r.url);
    const idleMs = limits.idleMs ?? limits.deadlineMs;
    return new Promise<Outcome>((resolve) => {
      let received = 0;
      let done = false;
      const end = (o: Outcome): void => {
        if (done) return;
        done = true;
        cancel();
        // A failed call's connection is dropped (the peer may still be sending); a complete answer's socket goes back to the agent.
        if (o.kind === 'failed') req.destroy();
        resolve(o);
      };
      const fail = (error: PeerCallError): void => end({ kind: 'failed', error });
      const cancel = this.clock.setTimer(limits.deadlineMs, () => fail(deadlineError(r.what, url, limits, received)));
      let target: URL;
      try {
        target = new URL(url);
      } catch (e) {
        cancel();
        resolve({ kind: 'failed', error: unreachableError(r.what, url, undefined, (e as Error).message) });
        return;
      }
      const body = r.body !== undefined ? Buffer.from(JSON.stringify(r.body)) : undefined;
      const secure = target.protocol === 'https:';
      const options: https.RequestOptions = {
        method: r.method ?? 'GET',
        headers: { Accept: 'application/json', 'Accept-Encoding': 'gzip, deflate', ...(body ? { 'Content-Type': 'application/json', 'Content-Length': String(body.length) } : {}), ...r.headers },
        ...(secure && this.opts.httpsAgent ? { agent: this.opts.httpsAgent } : {}),
      };
      const req = (secure ? https : http).request(target, options, (res) => {
        const chunks: Buffer[] = [];
        const stream = decoded(res);
        stream.on('data', (c: Buffer) => {
          received += c.length;
          if (received > limits.maxBytes) fail(tooLargeError(r.what, url, limits));
          else chunks.push(c);
        });
        stream.on('error', (e: NodeJS.ErrnoException) => fail(unreachableError(r.what, url, e.code, e.message)));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks);
          const status = res.statusCode ?? 0;
          end({ kind: 'answer', answer: r.bytes ? { status, headers: headersOf(res), text: '', raw } : { status, headers: headersOf(res), text: raw.toString('utf8') } });
        });
      });
      req.setTimeout(idleMs, () => fail(idleError(r.what, url, idleMs)));
      req.on('error', (e: NodeJS.ErrnoException) => fail(unreachableError(r.what, url, e.code, e.message)));
      req.end(body);
    });
  }
}
