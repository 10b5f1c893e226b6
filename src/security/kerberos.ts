/**
 * Kerberos login from a keytab and SPNEGO tokens for the RM REST API (hadoop.http.authentication.type
 * = kerberos), with Flink's keys security.kerberos.login.keytab / .principal and
 * security.kerberos.krb5-conf.path.
 *
 * Everything Kerberos is done by MIT krb5's GSSAPI through the `kerberos` npm package (an optional
 * dependency, built against Debian's libkrb5-dev, loaded only when the keys are set):
 *  - Login: the sidecar points MIT at a private credential cache (KRB5CCNAME=FILE:<0700 temp dir>/krb5cc)
 *    and at the keytab as its *client keytab* (KRB5_CLIENT_KTNAME). Asking GSSAPI for credentials of
 *    the principal then makes MIT get a ticket-granting ticket from the KDC with the keytab's key
 *    ("client keytab initiation", MIT krb5 1.11+). A fresh login = that cache removed, credentials asked again.
 *  - Renewal: at 80 % of the ticket's lifetime (the share Hadoop's UGI uses) a fresh login runs on the
 *    injected clock, so no request ever carries a ticket about to expire. The lifetime is read from
 *    the cache file (kerberos-ccache.ts); MIT would also fetch a new ticket by itself once one has
 *    expired, which covers a sidecar that slept through its renewal.
 *  - Each RM request gets a fresh SPNEGO token for the service principal HTTP/<rm-host>@REALM
 *    (GSSAPI host-based name `HTTP@<rm-host>`; the REALM comes from krb5.conf's domain_realm or
 *    default_realm), so a 307 from a standby to the active RM is authenticated for the active RM.
 *
 * The environment variables are process-wide: the sidecar is the only Kerberos user in its process.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Clock } from '../core/clock';
import { Logger, silentLogger } from '../core/logger';
import { RmAuthenticator, RmAuthorization } from '../yarn/rm-auth';
import { TicketTimes, readTgtTimes } from './kerberos-ccache';

/** The part of the `kerberos` package the sidecar uses (declared here: the package is optional). */
export interface GssClient {
  step(challenge: string): Promise<string>;
  /** SASL GSSAPI's security-layer messages (RFC 4752), after the context is complete. */
  unwrap?(challenge: string): Promise<string>;
  wrap?(challenge: string, options?: { user?: string }): Promise<string>;
  readonly contextComplete?: boolean;
  /** The client principal once the context is complete. */
  readonly username?: string;
}
export interface GssLibrary {
  initializeClient(service: string, options: { principal?: string; mechOID?: number }): Promise<GssClient>;
  readonly GSS_MECH_OID_SPNEGO: number;
  readonly GSS_MECH_OID_KRB5?: number;
}

/** A Kerberos problem that stops start-up (wrong keytab, unknown principal, KDC unreachable, package missing). */
export class KerberosLoginError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KerberosLoginError';
  }
}

export type KerberosSettings =
  | { kind: 'off' }
  | { kind: 'keytab'; keytab: string; principal: string; krb5Conf?: string };

/** The three keys as one decision; one of keytab/principal without the other is a configuration error. */
export function kerberosSettings(v: {
  'security.kerberos.login.keytab': string;
  'security.kerberos.login.principal': string;
  'security.kerberos.krb5-conf.path': string;
}): KerberosSettings | { kind: 'invalid'; problem: string } {
  const keytab = v['security.kerberos.login.keytab'].trim();
  const principal = v['security.kerberos.login.principal'].trim();
  const krb5Conf = v['security.kerberos.krb5-conf.path'].trim();
  if (!keytab && !principal) return { kind: 'off' };
  if (!keytab) return { kind: 'invalid', problem: 'security.kerberos.login.principal is set but security.kerberos.login.keytab is not: set both (or neither)' };
  if (!principal) return { kind: 'invalid', problem: 'security.kerberos.login.keytab is set but security.kerberos.login.principal is not: set both (or neither)' };
  if (!/^[^\s@/]+(\/[^\s@/]+)*(@[^\s@]+)?$/.test(principal)) {
    return { kind: 'invalid', problem: `security.kerberos.login.principal '${principal}' is not a Kerberos principal (name[/instance][@REALM])` };
  }
  return { kind: 'keytab', keytab, principal, ...(krb5Conf ? { krb5Conf } : {}) };
}

const DEBIAN_HINT = "install Debian's libkrb5-dev (apt-get install libkrb5-dev) and run `npm install` again (or `npm rebuild kerberos`)";

/**
 * Loads the `kerberos` package only now (it is optional: `npm ci` on a machine without
 * libkrb5-dev installs everything else). Its absence is a clear start-up error.
 */
export function loadGssLibrary(load: (name: string) => unknown = require): GssLibrary {
  let mod: unknown;
  try {
    mod = load('kerberos');
  } catch (e) {
    throw new KerberosLoginError(
      `security.kerberos.login.keytab is set, but the optional 'kerberos' npm package is not available (${firstLine(e)}): ${DEBIAN_HINT}`,
    );
  }
  const m = mod as Partial<GssLibrary>;
  if (typeof m.initializeClient !== 'function' || typeof m.GSS_MECH_OID_SPNEGO !== 'number') {
    throw new KerberosLoginError(`the 'kerberos' npm package does not offer initializeClient/GSS_MECH_OID_SPNEGO: ${DEBIAN_HINT}`);
  }
  return m as GssLibrary;
}

/** rename(2) when the file exists; false when it did not. */
function moveIfExists(from: string, to: string): boolean {
  try {
    fs.renameSync(from, to);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0];
}

/** What MIT's errors mean for an operator, added after the library's own text. */
export function explainGssError(message: string, ctx: { principal: string; keytab: string; service: string }): string {
  const m = message;
  if (/Decrypt integrity check failed|Preauthentication failed|Password incorrect/i.test(m)) {
    return `${m} — the key in ${ctx.keytab} does not match the KDC's key for ${ctx.principal} (a wrong keytab, or the principal's key was changed since it was exported: export it again)`;
  }
  if (/Can't find client principal .* in cache collection|No key table entry found|Key table entry not found/i.test(m)) {
    return `${m} — ${ctx.keytab} has no key for ${ctx.principal} (list it with: klist -k ${ctx.keytab})`;
  }
  if (/Client\b.*not found in Kerberos database/i.test(m)) return `${m} — the KDC does not know ${ctx.principal}`;
  if (/Server\b.*not found in Kerberos database/i.test(m)) {
    return `${m} — the KDC has no service principal ${ctx.service} (the RM's SPNEGO principal must be HTTP/<the host name in the RM address>@REALM)`;
  }
  if (/Cannot contact any KDC|Cannot find KDC|Cannot resolve network address for KDC/i.test(m)) {
    return `${m} — no KDC answered (check the realm's kdc entries in krb5.conf, security.kerberos.krb5-conf.path)`;
  }
  if (/Clock skew too great/i.test(m)) return `${m} — this machine's clock differs from the KDC's by more than the allowed skew`;
  return m;
}

export interface KerberosLoginOptions {
  principal: string;
  keytab: string;
  krb5Conf?: string;
  /** A host whose HTTP/<host> ticket is fetched at login (the first RM), proving the whole chain works. */
  probeHost: string;
  /**
   * Another service to fetch a ticket for at login instead (GSSAPI host-based name, e.g.
   * `zookeeper@zk1.example.com`, over plain Kerberos): the first ZooKeeper server with SASL.
   */
  probeService?: string;
  clock: Clock;
  logger?: Logger;
  /** GSSAPI; loadGssLibrary() when absent. */
  gss?: GssLibrary;
  /** Where the private credential cache lives; a new 0700 temp dir when absent. */
  cacheDir?: string;
  /** Reads the TGT's times after a login (tests inject); the cache file when absent. */
  readTicket?: (cacheFile: string, principal: string) => TicketTimes | undefined;
  /** Environment the MIT library reads (process.env; tests pass their own object). */
  env?: NodeJS.ProcessEnv;
}

export interface KerberosStatus {
  principal: string;
  /** Epoch ms the current TGT expires, when known. */
  ticketExpiresAt?: number;
  /** Epoch ms the next renewal runs. */
  renewAt?: number;
  logins: number;
  lastError?: string;
}

/** Renew once this share of the lifetime has passed (Hadoop's UGI TICKET_RENEW_WINDOW). */
export const RENEW_AT = 0.8;
/** When the lifetime cannot be read: log in again this often (Flink's security.kerberos.relogin.period default). */
export const FALLBACK_RENEW_MS = 60_000;
/** Smallest wait between renewals, so a tiny lifetime cannot spin the KDC. */
export const MIN_RENEW_MS = 1_000;
/** Longest wait between logins once the ticket in hand has run out (a KDC down for long). */
export const MAX_RETRY_MS = 60_000;

export class KerberosLogin implements RmAuthenticator {
  readonly principal: string;
  readonly cacheFile: string;
  private readonly opts: KerberosLoginOptions;
  private readonly gss: GssLibrary;
  private readonly log: Logger;
  private readonly ownsCacheDir: boolean;
  private readonly cacheDir: string;
  private cancelTimer: (() => void) | undefined;
  private inFlight: Promise<void> | undefined;
  private state: KerberosStatus;
  private stopped = false;
  /** Failed logins since the last one that worked (the retry's backoff once the ticket has run out). */
  private failures = 0;

  constructor(opts: KerberosLoginOptions) {
    this.opts = opts;
    this.principal = opts.principal;
    this.log = opts.logger ?? silentLogger;
    this.gss = opts.gss ?? loadGssLibrary();
    this.ownsCacheDir = !opts.cacheDir;
    this.cacheDir = opts.cacheDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'blocklist-krb5-'));
    this.cacheFile = path.join(this.cacheDir, 'krb5cc');
    this.state = { principal: opts.principal, logins: 0 };
    const env = opts.env ?? process.env;
    if (opts.krb5Conf) env.KRB5_CONFIG = opts.krb5Conf;
    env.KRB5CCNAME = `FILE:${this.cacheFile}`;
    env.KRB5_CLIENT_KTNAME = `FILE:${opts.keytab}`;
  }

  status(): KerberosStatus {
    return { ...this.state };
  }

  servicePrincipal(host: string): string {
    const at = this.principal.lastIndexOf('@');
    return `HTTP/${host}${at >= 0 ? this.principal.slice(at) : ''}`;
  }

  /** The first login (start-up): any failure is a KerberosLoginError naming principal, keytab and the KDC's answer. */
  async start(): Promise<void> {
    this.checkFiles();
    await this.relogin('start-up');
  }

  /** A fresh login now; concurrent callers share one. */
  relogin(reason: string): Promise<void> {
    if (!this.inFlight) {
      this.inFlight = this.login(reason).finally(() => {
        this.inFlight = undefined;
      });
    }
    return this.inFlight;
  }

  /** Resolves once no login is in flight (a connection asking for a ticket waits for a renewal to finish). */
  async ready(): Promise<void> {
    if (this.inFlight) await this.inFlight.catch(() => undefined);
  }

  async authorize(host: string): Promise<RmAuthorization> {
    await this.ready();
    const client = await this.gss.initializeClient(`HTTP@${host}`, { principal: this.principal, mechOID: this.gss.GSS_MECH_OID_SPNEGO });
    const token = await client.step('');
    return {
      header: `Negotiate ${token}`,
      async verify(wwwAuthenticate) {
        const m = /Negotiate\s+([A-Za-z0-9+/=]+)/i.exec(wwwAuthenticate ?? '');
        if (m) await client.step(m[1]);
      },
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    await this.inFlight?.catch(() => undefined);
    fs.rmSync(this.cacheFile, { force: true });
    fs.rmSync(`${this.cacheFile}.previous`, { force: true });
    if (this.ownsCacheDir) fs.rmSync(this.cacheDir, { recursive: true, force: true });
  }

  private checkFiles(): void {
    const { keytab, krb5Conf } = this.opts;
    try {
      const st = fs.statSync(keytab);
      if (!st.isFile() || st.size === 0) throw new Error('not a non-empty file');
      fs.accessSync(keytab, fs.constants.R_OK);
    } catch (e) {
      throw new KerberosLoginError(`security.kerberos.login.keytab ${keytab} cannot be read: ${firstLine(e)}`);
    }
    if (krb5Conf) {
      try {
        fs.accessSync(krb5Conf, fs.constants.R_OK);
      } catch (e) {
        throw new KerberosLoginError(`security.kerberos.krb5-conf.path ${krb5Conf} cannot be read: ${firstLine(e)}`);
      }
    }
  }

  private async login(reason: string): Promise<void> {
    const probe = this.opts.probeService;
    const service = probe ? probe.replace('@', '/') : this.servicePrincipal(this.opts.probeHost);
    const clock = this.opts.clock;
    // Without the cache MIT cannot reuse its ticket: it asks the KDC again with the keytab's key. The
    // old cache is moved aside, not deleted, so a failed renewal (KDC down) leaves the ticket in hand
    // in use until it ends; requests wait for a login in flight (authorize), so none sees the gap.
    const previous = `${this.cacheFile}.previous`;
    const hadCache = moveIfExists(this.cacheFile, previous);
    try {
      const client = probe
        ? await this.gss.initializeClient(probe, { principal: this.principal, ...(this.gss.GSS_MECH_OID_KRB5 !== undefined ? { mechOID: this.gss.GSS_MECH_OID_KRB5 } : {}) })
        : await this.gss.initializeClient(`HTTP@${this.opts.probeHost}`, { principal: this.principal, mechOID: this.gss.GSS_MECH_OID_SPNEGO });
      await client.step('');
      fs.rmSync(previous, { force: true });
    } catch (e) {
      if (hadCache) moveIfExists(previous, this.cacheFile);
      const said = explainGssError(firstLine(e), { principal: this.principal, keytab: this.opts.keytab, service });
      this.state.lastError = said;
      const err = new KerberosLoginError(`Kerberos login as ${this.principal} from keytab ${this.opts.keytab} failed (${reason}; ticket for ${service}): ${said}`);
      this.failures++;
      if (reason !== 'start-up') this.scheduleRetry();
      throw err;
    }
    this.failures = 0;
    this.state.logins++;
    delete this.state.lastError;
    const ticket = (this.opts.readTicket ?? readTgtTimes)(this.cacheFile, this.principal);
    const now = clock.now();
    let delay: number;
    if (ticket && ticket.endTime > ticket.startTime) {
      const renewAt = ticket.startTime + RENEW_AT * (ticket.endTime - ticket.startTime);
      delay = Math.max(MIN_RENEW_MS, renewAt - now);
      this.state.ticketExpiresAt = ticket.endTime;
    } else {
      delay = FALLBACK_RENEW_MS;
      delete this.state.ticketExpiresAt;
    }
    this.state.renewAt = now + delay;
    this.log.info(`Kerberos: logged in as ${this.principal} (${reason})`, {
      principal: this.principal,
      ...(ticket ? { ticketExpires: new Date(ticket.endTime).toISOString() } : {}),
      renewAt: new Date(now + delay).toISOString(),
    });
    this.arm(delay);
  }

  private arm(delay: number): void {
    this.cancelTimer?.();
    if (this.stopped) return;
    this.cancelTimer = this.opts.clock.setTimer(delay, () => {
      this.cancelTimer = undefined;
      this.relogin('renewal').catch((e: Error) => this.log.warn(`Kerberos: renewal failed, retrying: ${e.message}`, { principal: this.principal }));
    });
  }

  /**
   * After a failed renewal: again soon, but well before the current ticket runs out where possible.
   * Once it has run out, the retries back off (1 s, 2 s, 4 s, … at most MAX_RETRY_MS): a KDC that
   * is down for an hour would otherwise take a login a second from every sidecar — a thousand jobs,
   * a thousand logins a second at a KDC on its way back.
   */
  private scheduleRetry(): void {
    this.arm(retryDelay(this.state.ticketExpiresAt, this.opts.clock.now(), this.failures));
  }
}

/**
 * The wait before the next login after `failures` failed ones in a row (≥ 1): half the time the
 * ticket in hand has left (at most 30 s, at least MIN_RENEW_MS); once it has run out (or its end is
 * unknown and the last login failed too), MIN_RENEW_MS doubled per failure, at most MAX_RETRY_MS.
 */
export function retryDelay(ticketExpiresAt: number | undefined, now: number, failures: number): number {
  const left = ticketExpiresAt !== undefined ? ticketExpiresAt - now : FALLBACK_RENEW_MS;
  if (left > 2 * MIN_RENEW_MS) return Math.max(MIN_RENEW_MS, Math.min(30_000, left / 2));
  return Math.min(MAX_RETRY_MS, MIN_RENEW_MS * 2 ** Math.min(16, Math.max(0, failures - 1)));
}
