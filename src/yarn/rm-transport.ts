/**
 * How one GET reaches the ResourceManager, whichever REST resource it reads (rm-client.ts reads them):
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
 */
import type * as https from 'node:https';
import { Clock } from '../core/clock';
import { Logger } from '../core/logger';
import { RmAuthenticator, RmAuthorization, offersNegotiate } from './rm-auth';
import { excerpt, httpError, tryParseJson } from './http-errors';
import { PeerCallError, PeerFailure, PeerHttp, PeerLimits, peerAddress, triesElsewhere } from './peer-http';
import { fetchNodes } from './off-thread';
import { Answer, fromWorker } from './rm-answer';
import { YarnCallError } from './types';

export interface RmTransportOptions {
  /** RM base URLs in HA order, normalised (normaliseBaseUrl), at least one. */
  addresses: string[];
  /** Simple-auth user sent as `?user.name=`; undefined = none. */
  user: string | undefined;
  clock: Clock;
  /** Bounds of the RM's lists (also the default of every call) and of its small answers. */
  listLimits: PeerLimits;
  smallLimits: PeerLimits;
  onFailure: ((failure: PeerFailure) => void) | undefined;
  /** 307 hops followed per call before giving up (a redirect loop between two standbys). */
  maxRedirects: number;
  log: Logger;
  auth: RmAuthenticator | undefined;
  httpsAgent: https.Agent | undefined;
  /** The CA bundle of the https agent, for the node-list worker's own requests. */
  ca: string | undefined;
}

/** Which bound an answer has, and who reads it: `nodes` is the node list for the worker. */
export type How = 'small' | 'list' | 'nodes';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Normalises `host:port` to `http://host:port` and drops a trailing slash. */
export function normaliseBaseUrl(address: string): string {
  const u = peerAddress(address, 'empty RM address', `'${address}' is not an RM web address (host:port or http(s)://host:port)`);
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
}

/** The host name of a URL as a Kerberos service principal names it: lower case, no port, no brackets. */
export function hostOf(url: string): string {
  return new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

export class RmTransport {
  readonly addresses: string[];
  private readonly http: PeerHttp;
  private readonly user: string | undefined;
  private readonly clock: Clock;
  private readonly listLimits: PeerLimits;
  private readonly smallLimits: PeerLimits;
  private readonly onFailure: ((failure: PeerFailure) => void) | undefined;
  private readonly maxRedirects: number;
  private readonly log: Logger;
  private readonly auth: RmAuthenticator | undefined;
  private readonly ca: string | undefined;
  /** Index into addresses of the RM that answered last (the active one, as far as we know). */
  private preferred = 0;

  constructor(o: RmTransportOptions) {
    this.addresses = o.addresses;
    this.user = o.user;
    this.clock = o.clock;
    this.listLimits = o.listLimits;
    this.smallLimits = o.smallLimits;
    this.onFailure = o.onFailure;
    this.maxRedirects = o.maxRedirects;
    this.log = o.log;
    this.auth = o.auth;
    this.ca = o.ca;
    this.http = new PeerHttp({ clock: o.clock, limits: o.listLimits, ...(o.onFailure ? { onFailure: o.onFailure } : {}), ...(o.httpsAgent ? { httpsAgent: o.httpsAgent } : {}) });
  }

  /** The RM base URL tried first on the next call. */
  get activeAddress(): string {
    return this.addresses[this.preferred];
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
  async get(path: string, size: 'small' | 'list'): Promise<unknown> {
    const text = (await this.getAnswer(path, size)).text;
    const body = tryParseJson(text);
    if (body === undefined) throw new YarnCallError(`RM GET ${path}: 200 but the body is not JSON: ${excerpt(text)}`, 200, true);
    return body;
  }

  /** The 2xx answer to GET path, from the preferred RM or the next that can be reached. */
  async getAnswer(path: string, how: How): Promise<Answer> {
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
