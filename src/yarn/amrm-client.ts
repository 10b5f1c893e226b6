/**
 * Client of the AMRM REST proxy (docs/amrm-proxy.openapi.yaml): the sidecar's write path into YARN.
 * Only the ApplicationMaster may call the RM's allocate, so blacklist updates and container releases
 * go to a small HTTP component in (or beside) the AM that feeds its AMRMClient.
 *
 * Errors: {"errors":[…]} bodies become YarnCallError; 4xx (except 408/429) are not retriable —
 * a refused update (e.g. "*", YARN's "Cannot add * to the blacklist!") will not get better.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import { Clock } from '../core/clock';
import { parseApplicationId, parseAttemptId, parseContainerId } from '../model/ids';
import { excerpt, retriableStatus, tryParseJson } from './http-errors';
import { PeerAnswer, PeerFailure, PeerHttp, PeerLimits, peerAddress } from './peer-http';
import { hostOfNodeId } from './rm-json';
import {
  AmrmProxy,
  AppContainer,
  AttemptInfo,
  BlacklistChange,
  BlacklistReading,
  BlacklistVersion,
  BlacklistView,
  BlacklistWrite,
  CompletedContainer,
  CompletedContainersPage,
  ReleaseResult,
  YarnCallError,
} from './types';

export interface AmrmClientOptions {
  /** The proxy's address: `host:port` or `http(s)://host:port`. */
  address: string;
  /** Deadline of each call, connect to last byte, ms. */
  timeoutMs?: number;
  /** Times the deadlines (default: the system clock). */
  clock?: Clock;
  /** Largest answer accepted (the blacklist, the containers), bytes; default PROXY_MAX_ANSWER_BYTES. */
  maxAnswerBytes?: number;
  /** Told of every call that got no complete answer, by kind (a metric). */
  onFailure?: (failure: PeerFailure) => void;
  /** For an https:// proxy: trusts the configured CA bundle. */
  httpsAgent?: https.Agent;
  /**
   * A file holding the proxy's per-application secret (the AMRMProxy interceptor hands it to the AM
   * container): sent as `Authorization: Bearer`, re-read on every call so a secret rewritten by a
   * restarted NodeManager is picked up. Proxies that need none (the simulator) ignore the header.
   */
  secretFile?: string;
}

export const AMRM_BASE_PATH = '/amrm/v1';

/**
 * The proxy's biggest answers: its blacklist with its owners (~4 MB at 100,000 hosts of the
 * simulator's names; twice that with 40-character names) and an application's containers (~150
 * bytes each). /attempt is a few hundred bytes.
 */
export const PROXY_MAX_ANSWER_BYTES = 16 * 1024 * 1024;
export const PROXY_MAX_ANSWER_KEY = 'cluster.resource-blocklist.amrm-proxy.max-answer-size';
const ATTEMPT_MAX_BYTES = 64 * 1024;
/** docs/amrm-proxy.openapi.yaml, Attempt.interceptorVersion. */
const INTERCEPTOR_VERSION = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/;
export class AmrmProxyClient implements AmrmProxy {
  readonly baseUrl: string;
  private readonly http: PeerHttp;
  private readonly timeoutMs: number;
  private readonly secretFile: string | undefined;
  private readonly attemptLimits: PeerLimits;

  constructor(opts: AmrmClientOptions) {
    const u = peerAddress(opts.address, 'no AMRM proxy address configured (cluster.resource-blocklist.amrm-proxy.address)', `'${opts.address}' is not an AMRM proxy address (host:port or URL)`);
    this.baseUrl = `${u.protocol}//${u.host}`;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.secretFile = opts.secretFile?.trim() ? opts.secretFile.trim() : undefined;
    const deadline = { deadlineMs: this.timeoutMs, deadlineKey: 'cluster.resource-blocklist.yarn.request-timeout' };
    this.attemptLimits = { ...deadline, maxBytes: ATTEMPT_MAX_BYTES };
    this.http = new PeerHttp({
      baseURL: this.baseUrl + AMRM_BASE_PATH,
      limits: { ...deadline, maxBytes: opts.maxAnswerBytes ?? PROXY_MAX_ANSWER_BYTES, maxBytesKey: PROXY_MAX_ANSWER_KEY },
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.onFailure ? { onFailure: opts.onFailure } : {}),
      ...(opts.httpsAgent ? { httpsAgent: opts.httpsAgent } : {}),
    });
  }

  async attempt(): Promise<AttemptInfo> {
    const o = await this.call('GET', '/attempt', undefined, { limits: this.attemptLimits });
    const applicationId = str(o, 'applicationId', 'attempt');
    const appAttemptId = str(o, 'appAttemptId', 'attempt');
    if (!parseApplicationId(applicationId).ok) throw shape(`attempt.applicationId '${applicationId}' is not a YARN application id`);
    if (!parseAttemptId(appAttemptId).ok) throw shape(`attempt.appAttemptId '${appAttemptId}' is not a YARN attempt id`);
    const reg = o.registered;
    if (typeof reg !== 'boolean' && reg !== 'true' && reg !== 'false') throw shape('attempt.registered is not a boolean');
    const out: AttemptInfo = { applicationId, appAttemptId, registered: reg === true || reg === 'true' };
    const am = o.amContainerId;
    if (am !== undefined && am !== null) {
      if (typeof am !== 'string' || !parseContainerId(am).ok) throw shape(`attempt.amContainerId '${String(am)}' is not a YARN container id`);
      out.amContainerId = am;
    }
    const version = o.interceptorVersion;
    if (version !== undefined && version !== null) {
      if (typeof version !== 'string' || !INTERCEPTOR_VERSION.test(version)) throw shape(`attempt.interceptorVersion '${String(version).slice(0, 80)}' is not a version`);
      out.interceptorVersion = version;
    }
    return out;
  }

  async blacklist(): Promise<BlacklistView> {
    return this.blacklistOf(await this.call('GET', '/blacklist'));
  }

  /**
   * The sync engine asks every poll tick; with 100,000 blocked hosts the answer is megabytes.
   * A proxy that versions its blacklist (an `ETag`, docs/amrm-proxy.openapi.yaml) is asked with
   * `If-None-Match` and answers 304 without a body while nothing changed (RFC 9110 §13.1.2): the
   * proxy neither serialises nor sends the list. From a proxy that sends no ETag the body stays
   * bytes (a megabytes-long string per tick would sit in V8's large-object space until a full
   * collection) and only its SHA-256 is kept; the same digest as the caller's means nothing to parse.
   */
  async blacklistSince(known: BlacklistVersion | undefined): Promise<BlacklistReading> {
    let version: BlacklistVersion | undefined;
    const o = await this.call('GET', '/blacklist', undefined, {
      ...(known?.kind === 'etag' ? { headers: { 'If-None-Match': known.etag } } : {}),
      unchanged: (raw, etag) => {
        if (etag !== undefined) {
          version = { kind: 'etag', etag };
          // A strong tag names one representation: the same tag is the same bytes, even from a
          // proxy (or something in front of it) that answered 200 instead of 304.
          return known?.kind === 'etag' && known.etag === etag;
        }
        version = { kind: 'digest', digest: createHash('sha256').update(raw).digest('base64') };
        return known?.kind === 'digest' && known.digest === version.digest;
      },
    });
    if (o === UNCHANGED) return { unchanged: true };
    // (A body that did not arrive as bytes was not seen by `unchanged`: an empty digest matches none.)
    return { unchanged: false, view: this.blacklistOf(o), version: version ?? { kind: 'digest', digest: '' } };
  }

  private blacklistOf(o: Record<string, unknown>): BlacklistView {
    const blacklist = strings(o, 'blacklist');
    // A proxy that predates owners answers only the union; then every entry is of unknown owner.
    if (o.owners === undefined) return { blacklist, owners: {} };
    if (typeof o.owners !== 'object' || o.owners === null || Array.isArray(o.owners)) throw shape('"owners" is not an object of host lists');
    const owners: Record<string, string[]> = {};
    for (const [owner, hosts] of Object.entries(o.owners as Record<string, unknown>)) {
      if (!Array.isArray(hosts) || !hosts.every((x) => typeof x === 'string')) throw shape(`owners["${owner}"] is not a list of strings`);
      owners[owner] = hosts as string[];
    }
    return { blacklist, owners };
  }

  /**
   * Asks for the minimal answer (RFC 7240 `Prefer: return=minimal`): a versioned proxy then sends
   * only the version the change was applied to and the one it made, not the whole list back; one
   * that predates versions sends the list, which is checked to be a JSON object as before.
   */
  async updateBlacklist(change: BlacklistChange, owner?: string): Promise<BlacklistWrite | undefined> {
    const o = await this.call(
      'POST',
      '/blacklist',
      { ...(owner !== undefined ? { owner } : {}), blacklistAdditions: change.additions, blacklistRemovals: change.removals },
      { headers: { Prefer: 'return=minimal' } },
    );
    const { etag, previousEtag } = o;
    // Anything else (no tags, a malformed one) is an unversioned proxy: the reader reads in full.
    if (typeof etag !== 'string' || typeof previousEtag !== 'string' || !isEntityTag(etag) || !isEntityTag(previousEtag)) return undefined;
    return { etag, previousEtag };
  }

  async completedContainers(after: number): Promise<CompletedContainersPage> {
    if (!Number.isSafeInteger(after) || after < 0) throw new YarnCallError(`completed-containers: 'after' must be a non-negative integer, got ${after}`, undefined, false);
    const o = await this.call('GET', `/completed-containers?after=${after}`);
    if (!Array.isArray(o.containers)) throw shape('completed-containers: expected {"containers":[…],"next":…}');
    const next = o.next;
    if (typeof next !== 'number' || !Number.isSafeInteger(next) || next < 0) throw shape('completed-containers.next is not a non-negative integer');
    const parse = (raw: unknown, i: number): CompletedContainer => {
      const where = `completed-containers[${i}]`;
      if (typeof raw !== 'object' || raw === null) throw shape(`${where} is not an object`);
      const c = raw as Record<string, unknown>;
      const containerId = str(c, 'containerId', where);
      if (!parseContainerId(containerId).ok) throw shape(`${where}.containerId '${containerId}' is not a YARN container id`);
      const nodeId = str(c, 'nodeId', where);
      const seq = c.seq;
      const exitStatus = c.exitStatus;
      const finishedAt = c.finishedAt;
      if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) throw shape(`${where}.seq is not a positive integer`);
      if (typeof exitStatus !== 'number' || !Number.isInteger(exitStatus)) throw shape(`${where}.exitStatus is not an integer`);
      if (typeof finishedAt !== 'number' || !Number.isFinite(finishedAt)) throw shape(`${where}.finishedAt is not a number`);
      const diagnostics = typeof c.diagnostics === 'string' ? c.diagnostics : '';
      return { seq, containerId, nodeId, host: hostOfNodeId(nodeId), exitStatus, diagnostics, finishedAt };
    };
    const containers: CompletedContainer[] = [];
    const skipped: string[] = [];
    o.containers.forEach((raw, i) => {
      try {
        containers.push(parse(raw, i));
      } catch (e) {
        if (!(e instanceof YarnCallError)) throw e;
        skipped.push(e.message);
      }
    });
    const page: CompletedContainersPage = { containers, next };
    if (skipped.length) page.skipped = skipped;
    // Anything but a short token (absent, malformed) is a proxy that predates epochs: the reader
    // falls back to noticing a restart by `next` going down.
    if (typeof o.epoch === 'string' && EPOCH.test(o.epoch)) page.epoch = o.epoch;
    return page;
  }

  async containers(): Promise<AppContainer[]> {
    const o = await this.call('GET', '/containers');
    if (!Array.isArray(o.containers)) throw shape('containers: expected {"containers":[…]}');
    return o.containers.map((raw, i) => {
      const where = `containers[${i}]`;
      if (typeof raw !== 'object' || raw === null) throw shape(`${where} is not an object`);
      const c = raw as Record<string, unknown>;
      const containerId = str(c, 'containerId', where);
      if (!parseContainerId(containerId).ok) throw shape(`${where}.containerId '${containerId}' is not a YARN container id`);
      const nodeId = str(c, 'nodeId', where);
      const out: AppContainer = { containerId, nodeId, host: hostOfNodeId(nodeId), state: typeof c.state === 'string' ? c.state : 'RUNNING' };
      if (typeof c.nodeHttpAddress === 'string' && c.nodeHttpAddress !== '') out.nodeHttpAddress = c.nodeHttpAddress;
      return out;
    });
  }

  async release(containerIds: string[]): Promise<ReleaseResult> {
    if (containerIds.length === 0) return { released: [], unknown: [] };
    const o = await this.call('POST', '/containers/release', { containerIds });
    return { released: strings(o, 'released'), unknown: strings(o, 'unknown') };
  }

  /**
   * One request; the 2xx body as a JSON object, or UNCHANGED when the caller already has the
   * answer: a 304 to its `If-None-Match`, or `unchanged` says so of the raw 2xx bytes and the
   * response's entity tag (nothing to decode or parse).
   */
  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>>;
  private async call(method: 'GET' | 'POST', path: string, body: unknown, opts: CallOptions & Required<Pick<CallOptions, 'unchanged'>>): Promise<Record<string, unknown> | typeof UNCHANGED>;
  private async call(method: 'GET' | 'POST', path: string, body: unknown, opts: Omit<CallOptions, 'unchanged'>): Promise<Record<string, unknown>>;
  private async call(method: 'GET' | 'POST', path: string, body?: unknown, opts: CallOptions = {}): Promise<Record<string, unknown> | typeof UNCHANGED> {
    const what = `AMRM proxy ${method} ${AMRM_BASE_PATH}${path}`;
    const headers: Record<string, string> = { ...opts.headers };
    if (this.secretFile !== undefined) headers.Authorization = `Bearer ${readSecret(this.secretFile)}`;
    const unchanged = opts.unchanged;
    const res = await this.http.request({ what, method, url: path, body, headers, ...(unchanged ? { bytes: true } : {}), ...(opts.limits ? { limits: opts.limits } : {}) });
    // 304 answers only a conditional request; to any other it is an error like any non-2xx.
    if (res.status === 304 && headers['If-None-Match'] !== undefined) return UNCHANGED;
    let text = res.text;
    if (res.raw !== undefined) {
      if (unchanged && res.status >= 200 && res.status < 300 && unchanged(res.raw, entityTagOf(res))) return UNCHANGED;
      text = res.raw.toString('utf8');
    }
    const parsed = tryParseJson(text);
    if (res.status < 200 || res.status >= 300) {
      throw new YarnCallError(`${what}: ${res.status} ${errorText(parsed) ?? (excerpt(text) || '(empty body)')}`, res.status, retriableStatus(res.status));
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new YarnCallError(`${what}: ${res.status} but the body is not a JSON object: ${excerpt(text)}`, res.status, true);
    }
    return parsed as Record<string, unknown>;
  }
}

interface CallOptions {
  headers?: Record<string, string>;
  /** This call's limits instead of the client's. */
  limits?: PeerLimits;
  /** Given the raw 2xx body and its entity tag (if the answer has a well-formed one): true when the caller has it already. */
  unchanged?: (raw: Buffer, etag: string | undefined) => boolean;
}

/** RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE (bounded here: a tag is short). */
function isEntityTag(t: string): boolean {
  return t.length <= 256 && /^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/.test(t);
}

/** The response's ETag when it is a well-formed entity tag; else none (the digest path). */
function entityTagOf(res: PeerAnswer): string | undefined {
  const v = res.headers.etag;
  return v !== undefined && isEntityTag(v.trim()) ? v.trim() : undefined;
}

/** A completed-containers epoch: an opaque short token (the proxies send 16 hex digits). */
const EPOCH = /^[A-Za-z0-9._~-]{1,64}$/;

/** What call() answers for a body its caller already has. */
const UNCHANGED: unique symbol = Symbol('unchanged');

/** The proxy secret (first line of the file); a missing or empty file is a retriable error (the hand-off may not be written yet). */
function readSecret(file: string): string {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new YarnCallError(`AMRM proxy secret file ${file} cannot be read: ${(e as Error).message}`, undefined, true);
  }
  const secret = text.split('\n')[0]?.trim() ?? '';
  if (secret === '') throw new YarnCallError(`AMRM proxy secret file ${file} is empty`, undefined, true);
  return secret;
}

/** {"errors":["…"]} (the project's and Flink's REST error body) or {"error":"…"}. */
function errorText(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const o = body as Record<string, unknown>;
  if (Array.isArray(o.errors) && o.errors.every((x) => typeof x === 'string')) return (o.errors as string[]).join('; ');
  if (typeof o.error === 'string') return o.error;
  if (typeof o.message === 'string') return o.message;
  return undefined;
}

function shape(msg: string): YarnCallError {
  return new YarnCallError(`AMRM proxy answered with an unusable body: ${msg}`, 200, true);
}

function str(o: Record<string, unknown>, key: string, where: string): string {
  const v = o[key];
  if (typeof v !== 'string' || v === '') throw shape(`${where}.${key} is missing or not a string`);
  return v;
}

function strings(o: Record<string, unknown>, key: string): string[] {
  const v = o[key];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw shape(`"${key}" is not a list of strings`);
  return v as string[];
}
