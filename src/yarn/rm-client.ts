/**
 * Read-only client of the real Hadoop ResourceManager REST API (ResourceManagerRest.md):
 * /ws/v1/cluster/info, /nodes, /apps/{appid}, /apps/{appid}/appattempts and
 * /apps/{appid}/appattempts/{attemptid}/containers.
 *
 * Why it is more than a few GET calls:
 *  - RM HA: a list of RM web addresses. A connection failure (refused, reset, timeout, DNS) moves on
 *    to the next one; the RM that answered last is tried first next time.
 *  - A standby RM answers 307 with `Location:` of the active one (RMWebAppFilter). Redirects are
 *    followed here, not by the HTTP layer, so the hop count is bounded and the active RM is remembered.
 *  - Simple auth (hadoop.http.authentication.type=simple): `?user.name=<user>` on every call,
 *    kept across redirects.
 *  - Kerberos (type=kerberos): an `Authorization: Negotiate …` header per request from an
 *    RmAuthenticator, for the service principal of the host the request goes to (a 307 to the
 *    active RM gets a token for that RM's HTTP/<host>). A 401 is retried once after a fresh login,
 *    then reported with the principal, the RM and what the KDC or the RM said.
 *  - Errors come as {"RemoteException":{"exception","message","javaClassName"}}
 *    (WebServicesIntro.md, "Response Errors"); they become YarnCallError with that text.
 *  - Every body is validated (rm-json.ts) before use: a broken RM yields a YarnCallError, never a
 *    TypeError in the caller.
 */
import * as https from 'node:https';
import { parseApplicationId, parseAttemptId } from '../model/ids';
import { Clock, systemClock } from '../core/clock';
import { Logger, silentLogger } from '../core/logger';
import { RmAuthenticator, RmAuthorization, offersNegotiate } from './rm-auth';
import { excerpt, httpError, tryParseJson } from './http-errors';
import { PeerCallError, PeerFailure, PeerHttp, PeerLimits, triesElsewhere } from './peer-http';
import { RmShapeError, parseApplication, parseAttempts, parseClusterInfo, parseClusterMetrics, parseContainers, parseNode } from './rm-json';
import { OFF_THREAD_BYTES, fetchNodes, releaseIdleWorker } from './off-thread';
import { Answer, caText, fromWorker, parseHere } from './rm-answer';
import { parseConfAnswer } from './rm-conf';
import {
  AppContainer,
  ApplicationInfo,
  AttemptSummary,
  ClusterInfo,
  ClusterMetrics,
  ClusterNode,
  NodeState,
  ResourceManagerReader,
  YarnCallError,
} from './types';

export interface RmClientOptions {
  /** RM web addresses in HA order: `host:port` or `http(s)://host:port`; a comma-separated string is split. */
  addresses: string | string[];
  /** Simple-auth user sent as `?user.name=`; empty or absent = none. */
  user?: string;
  /** Deadline of each HTTP request (one RM, one hop), connect to last byte, ms. */
  timeoutMs?: number;
  /** Times the deadlines (default: the system clock). */
  clock?: Clock;
  /**
   * Largest answer accepted from the RM's lists (the node list, an application's attempts, an
   * attempt's containers), bytes; default RM_MAX_LIST_BYTES. Its other answers are bounded by
   * RM_MAX_SMALL_BYTES.
   */
  maxListBytes?: number;
  /** Told of every call that got no complete answer, by kind (a metric). */
  onFailure?: (failure: PeerFailure) => void;
  /** 307 hops followed per call before giving up (a redirect loop between two standbys). */
  maxRedirects?: number;
  logger?: Logger;
  /** For https:// RMs: trusts the configured CA bundle (cluster.resource-blocklist.yarn.ssl.ca-file). */
  httpsAgent?: https.Agent;
  /** SPNEGO (Kerberos) for a secured RM; absent = no Authorization header. */
  auth?: RmAuthenticator;
  /**
   * The node list is fetched and parsed by a worker thread (default true). False: on the event
   * loop, as every other call (the bench's baseline; also a way out should the worker misbehave).
   */
  offThread?: boolean;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * The RM's lists at 10,000 nodes: a real Hadoop 3.5 RM writes ~1.8 KB of JSON per node (resource
 * informations of three kinds, utilisation, attributes): ~18 MB, with room for longer host names
 * and more resource types (docs/operations.md).
 */
export const RM_MAX_LIST_BYTES = 32 * 1024 * 1024;
/** /cluster/info, /cluster/metrics and one application: kilobytes (an application's diagnostics are capped by YARN at 64 K characters). */
export const RM_MAX_SMALL_BYTES = 4 * 1024 * 1024;
export const RM_MAX_LIST_KEY = 'cluster.resource-blocklist.yarn.max-answer-size';
export const REQUEST_TIMEOUT_KEY = 'cluster.resource-blocklist.yarn.request-timeout';

/** Normalises `host:port` to `http://host:port` and drops a trailing slash. */
export function normaliseBaseUrl(address: string): string {
  const a = address.trim();
  if (a === '') throw new YarnCallError('empty RM address', undefined, false);
  const withScheme = /^https?:\/\//i.test(a) ? a : `http://${a}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new YarnCallError(`'${address}' is not an RM web address (host:port or http(s)://host:port)`, undefined, false);
  }
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
}

export class ResourceManagerClient implements ResourceManagerReader {
  readonly addresses: string[];
  private readonly http: PeerHttp;
  private readonly user: string | undefined;
  private readonly timeoutMs: number;
  private readonly clock: Clock;
  private readonly listLimits: PeerLimits;
  private readonly smallLimits: PeerLimits;
  private readonly onFailure: ((failure: PeerFailure) => void) | undefined;
  private readonly maxRedirects: number;
  private readonly log: Logger;
  private readonly auth: RmAuthenticator | undefined;
  private readonly offThread: boolean;
  /**
   * Whether the last node list was big enough for the worker (undefined: none read yet, so the
   * worker is tried). A small cluster's list (< OFF_THREAD_BYTES, ~700 nodes) is read here and
   * the worker, whose own heap costs the process tens of megabytes, is stopped.
   */
  private bigNodeList: boolean | undefined;
  /** Nodes the RM counted last (clusterMetrics): before any list is read, a small count keeps the first read here too. */
  private nodeCount: number | undefined;
  /** The CA bundle of the https agent, for the worker's own requests. */
  private readonly ca: string | undefined;
  /** Index into addresses of the RM that answered last (the active one, as far as we know). */
  private preferred = 0;

  constructor(opts: RmClientOptions) {
    const list = (Array.isArray(opts.addresses) ? opts.addresses : opts.addresses.split(',')).map((s) => s.trim()).filter((s) => s !== '');
    if (list.length === 0) throw new YarnCallError('no RM web address configured (yarn.resourcemanager.webapp.address)', undefined, false);
    this.addresses = list.map(normaliseBaseUrl);
    this.user = opts.user ? opts.user : undefined;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.maxRedirects = opts.maxRedirects ?? 3;
    this.log = opts.logger ?? silentLogger;
    this.auth = opts.auth;
    this.offThread = opts.offThread ?? true;
    this.ca = caText(opts.httpsAgent);
    this.clock = opts.clock ?? systemClock;
    this.listLimits = { deadlineMs: this.timeoutMs, deadlineKey: REQUEST_TIMEOUT_KEY, maxBytes: opts.maxListBytes ?? RM_MAX_LIST_BYTES, maxBytesKey: RM_MAX_LIST_KEY };
    this.smallLimits = { deadlineMs: this.timeoutMs, deadlineKey: REQUEST_TIMEOUT_KEY, maxBytes: RM_MAX_SMALL_BYTES };
    this.onFailure = opts.onFailure;
    this.http = new PeerHttp({ clock: this.clock, limits: this.listLimits, ...(opts.onFailure ? { onFailure: opts.onFailure } : {}), ...(opts.httpsAgent ? { httpsAgent: opts.httpsAgent } : {}) });
  }

  /** The RM base URL tried first on the next call. */
  get activeAddress(): string {
    return this.addresses[this.preferred];
  }

  async clusterInfo(): Promise<ClusterInfo> {
    return this.shaped('cluster info', await this.get('/ws/v1/cluster/info', 'small'), parseClusterInfo);
  }

  async clusterMetrics(): Promise<ClusterMetrics> {
    const m = this.shaped('cluster metrics', await this.get('/ws/v1/cluster/metrics', 'small'), parseClusterMetrics);
    this.nodeCount = Math.max(m.totalNodes, m.activeNodes + m.decommissioningNodes + m.decommissionedNodes + m.lostNodes + m.unhealthyNodes + m.rebootedNodes + m.shutdownNodes);
    return m;
  }

  /**
   * Nodes, all of them or those in `states`. Without `states` the RM answers every state
   * (RMWebServices#getNodes uses EnumSet.allOf(NodeState)); naming states lets the RM filter,
   * which matters at 10,000 nodes — but only name states every supported RM knows, since an older
   * RM fails NodeState.valueOf on one it lacks.
   */
  async nodes(states?: readonly NodeState[]): Promise<ClusterNode[]> {
    const query = states && states.length ? `?states=${states.join(',')}` : '';
    return this.nodesAt(`/ws/v1/cluster/nodes${query}`);
  }

  /**
   * The node list is the RM's biggest answer (megabytes at 10,000 nodes): a worker thread makes
   * the request, receives and parses the body (off-thread.ts), so the event loop holds neither the
   * megabytes nor the 60-250 ms a JSON.parse of them takes on a busy machine. Which RM, the
   * redirects and the Kerberos header and checks stay here (getFrom), the same as for every call.
   */
  private async nodesAt(path: string): Promise<ClusterNode[]> {
    // About 350 bytes of JSON per node: below OFF_THREAD_BYTES the worker costs more than it saves.
    const expectBig = this.bigNodeList ?? (this.nodeCount === undefined || this.nodeCount * 350 >= OFF_THREAD_BYTES);
    const a = await this.getAnswer(path, this.offThread && expectBig ? 'nodes' : 'list');
    const got = a.nodes ?? parseHere(a.text);
    const big = (a.bytes ?? Buffer.byteLength(a.text)) >= OFF_THREAD_BYTES;
    if (this.offThread && big !== this.bigNodeList) {
      this.bigNodeList = big;
      if (!big && a.bytes !== undefined) void releaseIdleWorker();
    }
    if (got.ok) return got.nodes;
    if (got.notJson) throw new YarnCallError(`RM GET ${path}: 200 but the body is not JSON: ${excerpt(got.error)}`, 200, true);
    return this.shaped('nodes', undefined, () => {
      throw new RmShapeError(got.error);
    });
  }

  /** One node (a kilobyte or two, against megabytes for the list at 10,000 nodes); undefined on the RM's 404. */
  async node(nodeId: string): Promise<ClusterNode | undefined> {
    if (!/^(\[[0-9A-Fa-f:.]+\]|[^\s/?#:[\]%]+):\d{1,5}$/.test(nodeId)) throw new YarnCallError(`'${nodeId}' is not a NodeId (host:port)`, undefined, false);
    let body: unknown;
    try {
      body = await this.get(`/ws/v1/cluster/nodes/${nodeId}`, 'small');
    } catch (e) {
      if (e instanceof YarnCallError && e.status === 404) return undefined;
      throw e;
    }
    return this.shaped(`node ${nodeId}`, body, (b) => parseNode(typeof b === 'object' && b !== null ? (b as { node?: unknown }).node : undefined, 'node'));
  }

  async application(appId: string): Promise<ApplicationInfo> {
    this.checkApp(appId);
    const body = await this.get(`/ws/v1/cluster/apps/${appId}`, 'small');
    return this.shaped(`application ${appId}`, body, (b) => parseApplication(b, appId));
  }

  async attempts(appId: string): Promise<AttemptSummary[]> {
    this.checkApp(appId);
    const body = await this.get(`/ws/v1/cluster/apps/${appId}/appattempts`, 'list');
    return this.shaped(`attempts of ${appId}`, body, (b) => parseAttempts(b, appId));
  }

  async containers(appId: string, attemptId: string): Promise<AppContainer[]> {
    this.checkApp(appId);
    const a = parseAttemptId(attemptId);
    if (!a.ok) throw new YarnCallError(a.error, undefined, false);
    const app = parseApplicationId(appId);
    if (app.ok && (a.value.application.clusterTimestamp !== app.value.clusterTimestamp || a.value.application.id !== app.value.id)) {
      throw new YarnCallError(`attempt ${attemptId} does not belong to ${appId}`, undefined, false);
    }
    const body = await this.get(`/ws/v1/cluster/apps/${appId}/appattempts/${attemptId}/containers`, 'list');
    return this.shaped(`containers of ${attemptId}`, body, parseContainers);
  }

  /**
   * One key of the RM's own configuration (its /conf servlet, rm-conf.ts); undefined when the RM
   * holds no value for it (404). Other failures (403 with instrumentation access for admins only,
   * an unreachable RM) throw.
   */
  async confValue(key: string): Promise<string | undefined> {
    const path = `/conf?name=${encodeURIComponent(key)}`;
    try {
      return parseConfAnswer((await this.getAnswer(path, 'small')).text, key);
    } catch (e) {
      if (e instanceof YarnCallError && e.status === 404) return undefined;
      throw e;
    }
  }

  private checkApp(appId: string): void {
    const p = parseApplicationId(appId);
    if (!p.ok) throw new YarnCallError(p.error, undefined, false);
  }

  private shaped<T>(what: string, body: unknown, parse: (b: unknown) => T): T {
    try {
      return parse(body);
    } catch (e) {
      if (e instanceof RmShapeError) {
        throw new YarnCallError(`RM answered ${what} with an unusable body: ${e.message}`, 200, true);
      }
      throw e;
    }
  }

  /** The SPNEGO header for a request to url's host, or undefined without Kerberos. */
  private async authorization(url: string, path: string): Promise<RmAuthorization | undefined> {
    if (!this.auth) return undefined;
    const host = hostOf(url);
    try {
      return await this.auth.authorize(host);
    } catch (e) {
      throw new YarnCallError(
        `RM GET ${path}: no Kerberos ticket for ${this.auth.servicePrincipal(host)} (RM ${url}) as ${this.auth.principal}: ${(e as Error).message}`,
        undefined,
        true,
      );
    }
  }

  private async reloginOrThrow(url: string, path: string): Promise<void> {
    const auth = this.auth as RmAuthenticator;
    try {
      await auth.relogin(`401 from ${url}`);
    } catch (e) {
      throw new YarnCallError(`RM GET ${path}: 401 from ${url}, and a fresh Kerberos login as ${auth.principal} failed: ${(e as Error).message}`, 401, true);
    }
  }

  /** The second 401 in a row for one request: the RM does not accept our tickets even fresh ones. */
  private refused(url: string, path: string, res: Answer): YarnCallError {
    const auth = this.auth as RmAuthenticator;
    const service = auth.servicePrincipal(hostOf(url));
    const body = excerpt(res.text, 160);
    return new YarnCallError(
      `RM GET ${path}: 401 from ${url}: the RM refused the SPNEGO ticket of ${auth.principal} for ${service} even after a fresh login ` +
        `(check that the RM's keytab holds ${service} with the KDC's current key, and the clocks)${body ? `; RM said: ${body}` : ''}`,
      401,
      true,
    );
  }

  /** Mutual authentication: an answer that carries a Negotiate token must verify against our context. */
  private async verifyAnswer(authz: RmAuthorization, url: string, path: string, res: Answer): Promise<void> {
    try {
      await authz.verify(res.wwwAuthenticate);
    } catch (e) {
      throw new YarnCallError(`RM GET ${path}: the answer of ${url} failed Kerberos mutual authentication: ${(e as Error).message}`, res.status, true);
    }
  }

  private withUser(url: string): string {
    if (!this.user) return url;
    const u = new URL(url);
    if (!u.searchParams.has('user.name')) u.searchParams.set('user.name', this.user);
    return u.toString();
  }

  /** GET path from the preferred RM (falling over to the others), parsed as JSON (a body that is not JSON is a YarnCallError). */
  private async get(path: string, size: 'small' | 'list'): Promise<unknown> {
    const text = (await this.getAnswer(path, size)).text;
    const body = tryParseJson(text);
    if (body === undefined) throw new YarnCallError(`RM GET ${path}: 200 but the body is not JSON: ${excerpt(text)}`, 200, true);
    return body;
  }

  /** The 2xx answer to GET path, from the preferred RM or the next that can be reached. */
  private async getAnswer(path: string, how: How): Promise<Answer> {
    const n = this.addresses.length;
    const failures: string[] = [];
    let last: YarnCallError | undefined;
    for (let k = 0; k < n; k++) {
      const index = (this.preferred + k) % n;
      const base = this.addresses[index];
      const outcome = await this.getFrom(base, path, how);
      if (outcome.kind === 'ok') {
        if (this.preferred !== outcome.answeredBy) {
          this.log.info('RM changed', { rm: this.addresses[outcome.answeredBy] });
        }
        this.preferred = outcome.answeredBy;
        return outcome.answer;
      }
      last = outcome.error;
      failures.push(`${base}: ${outcome.error.message}`);
      this.log.warn('RM unreachable, trying the next one', { rm: base, error: outcome.error.message });
    }
    if (n === 1 && last) throw last;
    throw new YarnCallError(`no ResourceManager reachable for GET ${path}: ${failures.join('; ')}`, last?.status, true);
  }

  private async getFrom(base: string, path: string, how: How): Promise<{ kind: 'ok'; answer: Answer; answeredBy: number } | { kind: 'next'; error: YarnCallError }> {
    let url = this.withUser(base + path);
    let answeredBy = this.addresses.indexOf(base);
    let reloggedIn = false;
    for (let hop = 0; ; ) {
      const authz = await this.authorization(url, path);
      const got = await this.exchange(url, path, authz ? { Authorization: authz.header } : {}, how);
      if (got.kind === 'next') return got;
      const res = got.answer;
      if (this.auth && res.status === 401 && offersNegotiate(res.wwwAuthenticate)) {
        if (!reloggedIn) {
          // An expired or revoked ticket, or a key changed on the KDC: one fresh login, same request.
          reloggedIn = true;
          this.log.warn('RM refused the Kerberos ticket; logging in again', { rm: url, principal: this.auth.principal });
          await this.reloginOrThrow(url, path);
          continue;
        }
        throw this.refused(url, path, res);
      }
      if (authz) await this.verifyAnswer(authz, url, path, res);
      if (REDIRECTS.has(res.status)) {
        const location = res.location;
        if (typeof location !== 'string' || location === '') {
          throw new YarnCallError(`RM GET ${path}: ${res.status} redirect from ${url} without a Location header`, res.status, true);
        }
        if (hop >= this.maxRedirects) {
          throw new YarnCallError(`RM GET ${path}: more than ${this.maxRedirects} redirects (last to ${location}); are all RMs standby?`, res.status, true);
        }
        const next = this.withUser(new URL(location, url).toString());
        this.log.debug('RM redirected (standby → active)', { from: url, to: next });
        url = next;
        hop++;
        const target = this.addresses.indexOf(normaliseBaseUrl(new URL(next).origin));
        if (target >= 0) answeredBy = target;
        continue;
      }
      if (res.status >= 200 && res.status < 300) {
        return { kind: 'ok', answer: res, answeredBy: answeredBy >= 0 ? answeredBy : this.preferred };
      }
      // A standby that cannot redirect (no active known yet) answers 503: another RM may be active.
      const error = httpError(`RM GET ${path}`, res.status, res.text);
      if (res.status === 503) return { kind: 'next', error };
      throw error;
    }
  }

  /**
   * One request, one answer: the node list through the worker when one runs (it fetches and
   * parses), everything else — and the node list when no worker can start — on this thread. A
   * connection failure, or no complete answer within the deadline, is 'next' (another RM of the
   * HA list may answer); other failures throw.
   */
  private async exchange(url: string, path: string, headers: Record<string, string>, how: How): Promise<{ kind: 'answer'; answer: Answer } | { kind: 'next'; error: YarnCallError }> {
    const what = `RM GET ${path}`;
    if (how === 'nodes') {
      const f = await fetchNodes(url, { headers, limits: this.listLimits, clock: this.clock, ...(this.ca !== undefined ? { ca: this.ca } : {}) });
      if (f !== undefined) {
        try {
          const got = fromWorker(what, url, f, this.listLimits);
          if (got.kind === 'next' && got.error instanceof PeerCallError) this.onFailure?.(got.error.failure);
          return got;
        } catch (e) {
          if (e instanceof PeerCallError) this.onFailure?.(e.failure);
          throw e;
        }
      }
    }
    try {
      const res = await this.http.request({ what, url, headers, ...(how === 'small' ? { limits: this.smallLimits } : {}) });
      const { location, 'www-authenticate': negotiate } = res.headers;
      return { kind: 'answer', answer: { status: res.status, text: res.text, ...(location !== undefined ? { location } : {}), ...(negotiate !== undefined ? { wwwAuthenticate: negotiate } : {}) } };
    } catch (e) {
      if (triesElsewhere(e)) return { kind: 'next', error: e as YarnCallError };
      throw e;
    }
  }
}

/** Which bound an answer has, and who reads it: `nodes` is the node list for the worker. */
type How = 'small' | 'list' | 'nodes';

/** The host name of a URL as a Kerberos service principal names it: lower case, no port, no brackets. */
export function hostOf(url: string): string {
  return new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
}
