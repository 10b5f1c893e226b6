/**
 * The Kerberos login's own logic with a fake GSSAPI and a fake clock: the key rules, the renewal
 * schedule (80 % of the ticket's lifetime, a retry after a failed renewal, a fallback period), one
 * login for concurrent callers, the operator hints on MIT's errors, the credential cache reader,
 * and the missing-package error. The real thing (KDC, httpd, MIT GSSAPI) is in spnego-rm.test.ts.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FakeClock } from '../../src/core/clock';
import { loadConfig } from '../../src/config/config';
import {
  FALLBACK_RENEW_MS,
  GssClient,
  GssLibrary,
  KerberosLogin,
  KerberosLoginError,
  explainGssError,
  kerberosSettings,
  loadGssLibrary,
  retryDelay,
  MAX_RETRY_MS,
  MIN_RENEW_MS,
} from '../../src/security/kerberos';
import { TicketTimes, readCredentialTimes, readTgtTimes } from '../../src/security/kerberos-ccache';
import { offersNegotiate } from '../../src/yarn/rm-auth';

const T0 = 1_796_000_000_000;

/** GSSAPI as the login sees it: counts logins (a call while no cache file exists) and can be told to fail. */
class FakeGss implements GssLibrary {
  readonly GSS_MECH_OID_SPNEGO = 6;
  services: string[] = [];
  logins = 0;
  failWith: string | undefined;
  constructor(private readonly cacheFile: () => string) {}
  async initializeClient(service: string): Promise<GssClient> {
    this.services.push(service);
    if (this.failWith) throw new Error(this.failWith);
    if (!fs.existsSync(this.cacheFile())) {
      this.logins++;
      fs.writeFileSync(this.cacheFile(), 'ticket');
    }
    return { step: async () => `token-for-${service}` };
  }
}

const dirs: string[] = [];

function setup(lifetimeMs: number | undefined, clock = new FakeClock(T0)) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blocklist-krb-unit-'));
  dirs.push(dir);
  const keytab = path.join(dir, 'sidecar.keytab');
  fs.writeFileSync(keytab, 'not a real keytab: the fake GSSAPI never reads it');
  const env: NodeJS.ProcessEnv = {};
  let login: KerberosLogin | undefined;
  const gss = new FakeGss(() => (login as KerberosLogin).cacheFile);
  const readTicket = (): TicketTimes | undefined =>
    lifetimeMs === undefined ? undefined : { client: 'sidecar@EXAMPLE.COM', server: 'krbtgt/EXAMPLE.COM@EXAMPLE.COM', authTime: clock.now(), startTime: clock.now(), endTime: clock.now() + lifetimeMs };
  login = new KerberosLogin({ principal: 'sidecar@EXAMPLE.COM', keytab, probeHost: 'rm1.example.com', clock, gss, cacheDir: dir, readTicket, env });
  return { dir, keytab, env, gss, login, clock };
}

describe('kerberos (unit): keys, login, renewal schedule', () => {
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('the three keys: off when both login keys are empty; one without the other, or a malformed principal, is refused', () => {
    const v = (d: Record<string, string>) => kerberosSettings(loadConfig({ env: {}, dynamic: d }).values);
    assert.deepEqual(v({}), { kind: 'off' });
    assert.match(JSON.stringify(v({ 'security.kerberos.login.keytab': '/k' })), /principal is not: set both/);
    assert.match(JSON.stringify(v({ 'security.kerberos.login.principal': 'a@B' })), /keytab is not: set both/);
    assert.match(JSON.stringify(v({ 'security.kerberos.login.keytab': '/k', 'security.kerberos.login.principal': 'a b@C' })), /is not a Kerberos principal/);
    assert.deepEqual(v({ 'security.kerberos.login.keytab': '/k', 'security.kerberos.login.principal': 'blocklist/h.example.com@EXAMPLE.COM', 'security.kerberos.krb5-conf.path': '/etc/k.conf' }), {
      kind: 'keytab',
      keytab: '/k',
      principal: 'blocklist/h.example.com@EXAMPLE.COM',
      krb5Conf: '/etc/k.conf',
    });
  });

  it('points MIT at a private cache and the keytab as client keytab; the service principal is HTTP/<host>@<the principal\'s realm>', () => {
    const { env, login, keytab } = setup(10 * 3600_000);
    assert.equal(env.KRB5CCNAME, `FILE:${login.cacheFile}`);
    assert.equal(env.KRB5_CLIENT_KTNAME, `FILE:${keytab}`);
    assert.equal(login.servicePrincipal('rm2.example.com'), 'HTTP/rm2.example.com@EXAMPLE.COM');
  });

  it('logs in at start (asking for the probe RM\'s HTTP@host), renews at 80 % of the lifetime, again and again', async () => {
    const { gss, login, clock } = setup(10 * 3600_000);
    await login.start();
    assert.equal(gss.logins, 1);
    assert.deepEqual(gss.services, ['HTTP@rm1.example.com']);
    assert.equal(login.status().renewAt, T0 + 8 * 3600_000);
    clock.advance(8 * 3600_000 - 1);
    assert.equal(gss.logins, 1, 'not before 80 %');
    clock.advance(1);
    await login.relogin('settle'); // joins the renewal in flight
    assert.equal(gss.logins, 2);
    assert.equal(login.status().ticketExpiresAt, T0 + 8 * 3600_000 + 10 * 3600_000);
    clock.advance(8 * 3600_000);
    await login.relogin('settle');
    assert.equal(gss.logins, 3);
    await login.stop();
  });

  it('a failed renewal is logged and retried within half the time left (at most 30 s); the ticket still in hand stays in use', async () => {
    const { gss, login, clock } = setup(100_000);
    await login.start();
    gss.failWith = 'Cannot contact any KDC for realm \'EXAMPLE.COM\'';
    clock.advance(80_000);
    await new Promise((r) => setImmediate(r));
    assert.match(login.status().lastError ?? '', /no KDC answered/);
    assert.equal(fs.readFileSync(login.cacheFile, 'utf8'), 'ticket', 'the ticket in hand is kept for the requests until it ends');
    // 20 s left → retry in 10 s.
    gss.failWith = undefined;
    clock.advance(9_999);
    assert.equal(gss.logins, 1);
    clock.advance(1);
    await login.relogin('settle');
    assert.equal(gss.logins, 2);
    assert.equal(login.status().lastError, undefined);
    await login.stop();
  });

  it('the retry after a failed login: half the time the ticket has left; once it has run out, 1 s doubling per failure up to a minute', () => {
    assert.equal(retryDelay(T0 + 20_000, T0, 1), 10_000);
    assert.equal(retryDelay(T0 + 3600_000, T0, 5), 30_000, 'at most 30 s while the ticket lasts');
    assert.equal(retryDelay(undefined, T0, 7), 30_000, 'an unknown lifetime: the minute fallback, halved');
    const expired = [1, 2, 3, 4, 5, 6, 7, 8, 50].map((n) => retryDelay(T0 - 1, T0, n));
    assert.deepEqual(expired, [MIN_RENEW_MS, 2_000, 4_000, 8_000, 16_000, 32_000, MAX_RETRY_MS, MAX_RETRY_MS, MAX_RETRY_MS]);
  });

  it('a KDC down past the end of the ticket: logins back off (1, 2, 4, 8 s …), and the first that works resets them', async () => {
    const { gss, login, clock } = setup(10_000);
    await login.start();
    let attempts = 0;
    const original = gss.initializeClient.bind(gss);
    gss.initializeClient = async (service: string) => {
      attempts++;
      return original(service);
    };
    gss.failWith = "Cannot contact any KDC for realm 'EXAMPLE.COM'";
    const settle = () => new Promise((r) => setImmediate(r));
    // Renewal at 8 s fails; 2 s left → the ticket is as good as gone: 1 s, then 2, 4, 8 s.
    clock.advance(8_000);
    await settle();
    const at: number[] = [];
    for (let t = 0; t < 30_000; t += 250) {
      const before = attempts;
      clock.advance(250);
      await settle();
      if (attempts > before) at.push(clock.now() - T0);
    }
    // Without the backoff: one a second (29 in these 30 s).
    assert.deepEqual(at, [9_000, 11_000, 15_000, 23_000], `login attempts at ${at.join(', ')} ms`);
    // The KDC is back: the next attempt (at 39 s) works and the schedule is the ticket's again.
    gss.failWith = undefined;
    clock.advance(1_000);
    await settle();
    await settle();
    assert.equal(login.status().lastError, undefined);
    assert.equal(login.status().renewAt, T0 + 39_000 + 8_000, 'renewal at 80 % of the new ticket');
    await login.stop();
  });

  it('without a readable lifetime it logs in again every minute', async () => {
    const { gss, login, clock } = setup(undefined);
    await login.start();
    clock.advance(FALLBACK_RENEW_MS);
    await login.relogin('settle');
    assert.equal(gss.logins, 2);
    await login.stop();
  });

  it('concurrent fresh logins (several 401s at once) share one', async () => {
    const { gss, login } = setup(3600_000);
    await login.start();
    await Promise.all([login.relogin('a'), login.relogin('b'), login.relogin('c')]);
    assert.equal(gss.logins, 2);
    await login.stop();
  });

  it('a start-up failure names the principal, the keytab, the probe service principal and what the KDC said', async () => {
    const { gss, login, keytab } = setup(3600_000);
    gss.failWith = 'No credentials were supplied, or the credentials were unavailable or inaccessible: Decrypt integrity check failed';
    await assert.rejects(login.start(), (e: unknown) => {
      assert.ok(e instanceof KerberosLoginError);
      assert.equal(
        e.message,
        `Kerberos login as sidecar@EXAMPLE.COM from keytab ${keytab} failed (start-up; ticket for HTTP/rm1.example.com@EXAMPLE.COM): ` +
          `No credentials were supplied, or the credentials were unavailable or inaccessible: Decrypt integrity check failed — the key in ${keytab} does not match the KDC's key for sidecar@EXAMPLE.COM (a wrong keytab, or the principal's key was changed since it was exported: export it again)`,
      );
      return true;
    });
    await login.stop();
  });

  it('an unreadable keytab stops start-up before GSSAPI is asked', async () => {
    const { gss, login, keytab } = setup(3600_000);
    fs.rmSync(keytab);
    await assert.rejects(login.start(), /security\.kerberos\.login\.keytab .* cannot be read: ENOENT/);
    assert.equal(gss.services.length, 0);
    await login.stop();
  });

  it('operator hints for MIT\'s usual answers', () => {
    const ctx = { principal: 'p@R', keytab: '/k', service: 'HTTP/h@R' };
    assert.match(explainGssError("Can't find client principal p@R in cache collection", ctx), /\/k has no key for p@R/);
    assert.match(explainGssError("Client 'p@R' not found in Kerberos database", ctx), /the KDC does not know p@R/);
    assert.match(explainGssError('Server HTTP/h@R not found in Kerberos database', ctx), /no service principal HTTP\/h@R/);
    assert.match(explainGssError('Clock skew too great', ctx), /clock differs/);
    assert.equal(explainGssError('something new', ctx), 'something new');
  });

  it('without the optional `kerberos` package: a start-up error naming Debian\'s libkrb5-dev', () => {
    assert.throws(
      () =>
        loadGssLibrary(() => {
          throw new Error("Cannot find module 'kerberos'");
        }),
      (e: unknown) => e instanceof KerberosLoginError && /optional 'kerberos' npm package is not available \(Cannot find module 'kerberos'\): install Debian's libkrb5-dev/.test(e.message),
    );
    assert.throws(() => loadGssLibrary(() => ({})), /does not offer initializeClient/);
  });

  it('Negotiate challenges are recognised among other schemes', () => {
    assert.equal(offersNegotiate('Negotiate'), true);
    assert.equal(offersNegotiate(['Basic realm="x"', 'Negotiate']), true);
    assert.equal(offersNegotiate('Basic realm="x", Negotiate'), true);
    assert.equal(offersNegotiate('Bearer'), false);
    assert.equal(offersNegotiate(undefined), false);
  });
});

/** A credential cache in MIT's FILE format version 4, written field by field as the format describes it. */
function ccache(creds: { client: string[]; server: string[]; realm: string; times: [number, number, number, number] }[], version = 0x0504): Buffer {
  const parts: Buffer[] = [];
  const u16 = (n: number) => parts.push(Buffer.from([n >> 8, n & 255]));
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    parts.push(b);
  };
  const counted = (s: string | Buffer) => {
    const b = typeof s === 'string' ? Buffer.from(s) : s;
    u32(b.length);
    parts.push(b);
  };
  const principal = (realm: string, comps: string[]) => {
    u32(1);
    u32(comps.length);
    counted(realm);
    comps.forEach((c) => counted(c));
  };
  u16(version);
  if (version === 0x0504) {
    u16(12);
    parts.push(Buffer.alloc(12));
  }
  principal('EXAMPLE.COM', ['sidecar']);
  for (const c of creds) {
    principal(c.realm, c.client);
    principal(c.realm, c.server);
    u16(18);
    if (version === 0x0503) u16(18);
    counted(Buffer.alloc(32));
    c.times.forEach((t) => u32(t));
    parts.push(Buffer.from([0]));
    u32(0x40e10000);
    u32(0);
    u32(0);
    counted(Buffer.alloc(300, 7));
    counted('');
  }
  return Buffer.concat(parts);
}

describe('kerberos (unit): reading ticket times from the credential cache', () => {
  const t = 1_796_000_000;
  const tgt = { client: ['sidecar'], server: ['krbtgt', 'EXAMPLE.COM'], realm: 'EXAMPLE.COM', times: [t, t, t + 36_000, 0] as [number, number, number, number] };
  const http = { client: ['sidecar'], server: ['HTTP', 'rm1.example.com'], realm: 'EXAMPLE.COM', times: [t, t + 5, t + 50_000, 0] as [number, number, number, number] };

  it('reads every credential (names and times) of versions 4 and 3', () => {
    for (const version of [0x0504, 0x0503]) {
      const all = readCredentialTimes(ccache([tgt, http], version));
      assert.deepEqual(all, [
        { client: 'sidecar@EXAMPLE.COM', server: 'krbtgt/EXAMPLE.COM@EXAMPLE.COM', authTime: t * 1000, startTime: t * 1000, endTime: (t + 36_000) * 1000 },
        { client: 'sidecar@EXAMPLE.COM', server: 'HTTP/rm1.example.com@EXAMPLE.COM', authTime: t * 1000, startTime: (t + 5) * 1000, endTime: (t + 50_000) * 1000 },
      ]);
    }
  });

  it('picks the TGT of the principal (not a service ticket, not another client); a name without realm matches too', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blocklist-ccache-'));
    const file = path.join(dir, 'krb5cc');
    fs.writeFileSync(file, ccache([http, tgt, { ...tgt, client: ['other'], times: [t, t, t + 99_999, 0] }]));
    assert.equal(readTgtTimes(file, 'sidecar@EXAMPLE.COM')?.endTime, (t + 36_000) * 1000);
    assert.equal(readTgtTimes(file, 'sidecar')?.endTime, (t + 36_000) * 1000);
    assert.equal(readTgtTimes(file, 'nobody@EXAMPLE.COM'), undefined);
    assert.equal(readTgtTimes(path.join(dir, 'missing'), 'sidecar@EXAMPLE.COM'), undefined);
    fs.rmSync(dir, { recursive: true });
  });

  it('a truncated file, another version or garbage gives undefined (the login then renews every minute)', () => {
    const good = ccache([tgt]);
    assert.equal(readCredentialTimes(good.subarray(0, good.length - 3)), undefined);
    assert.equal(readCredentialTimes(Buffer.from([0x05, 0x01, 0, 0])), undefined);
    assert.equal(readCredentialTimes(Buffer.from('not a cache at all')), undefined);
  });
});
