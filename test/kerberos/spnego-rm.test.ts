/**
 * The sidecar against a Kerberos-secured RM, all real: an MIT KDC with a throwaway realm, Apache
 * httpd + mod_auth_gssapi enforcing SPNEGO in front of the simulator's RM face (an active "RM" at
 * 127.0.0.1 holding HTTP/127.0.0.1, a standby "RM" at localhost holding HTTP/localhost that answers
 * 307 to the active one), the `kerberos` npm package (MIT GSSAPI) in the sidecar.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { systemClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { KerberosLogin } from '../../src/security/kerberos';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { YarnCallError } from '../../src/yarn/types';
import { freePort } from '../support/zookeeper';
import { capturingLogger } from '../security/support';
import { runCli } from '../cli/run';
import { Httpd, Kdc, REALM, kerberosTempDir, requireKerberos, startHttpd, startKdc } from './harness';

const KRB_ENV = ['KRB5_CONFIG', 'KRB5CCNAME', 'KRB5_CLIENT_KTNAME'] as const;

describe('kerberos: the sidecar reads a SPNEGO-protected RM (real KDC, real httpd + mod_auth_gssapi)', function () {
  this.timeout(30_000);
  let dir: string;
  let kdc: Kdc;
  let httpd: Httpd;
  let sim: RunningSimulator;
  let active: string;
  let standby: string;
  let keytab: string;
  let savedEnv: Partial<Record<(typeof KRB_ENV)[number], string>>;

  before(async function () {
    requireKerberos(this);
    savedEnv = Object.fromEntries(KRB_ENV.map((k) => [k, process.env[k]]));
    const t0 = Date.now();
    dir = kerberosTempDir();
    kdc = await startKdc(dir);
    kdc.addPrincipal('sidecar');
    kdc.addPrincipal('HTTP/127.0.0.1');
    kdc.addPrincipal('HTTP/localhost');
    keytab = kdc.exportKeytab(path.join(dir, 'sidecar.keytab'), 'sidecar');
    fs.chmodSync(keytab, 0o600);
    const tKdc = Date.now();
    sim = await startSimulator({ port: 0, nodes: 6, containers: 6, tickMs: 0, seed: 19 });
    const [pActive, pStandby] = [await freePort(), await freePort()];
    httpd = await startHttpd(
      dir,
      kdc.krb5Conf,
      [
        { kind: 'proxy', host: '127.0.0.1', keytab: kdc.exportKeytab(path.join(dir, 'http-active.keytab'), 'HTTP/127.0.0.1'), target: sim.url },
        { kind: 'redirect', host: 'localhost', keytab: kdc.exportKeytab(path.join(dir, 'http-standby.keytab'), 'HTTP/localhost'), to: `http://127.0.0.1:${pActive}` },
      ],
      [pActive, pStandby],
    );
    active = `127.0.0.1:${pActive}`;
    standby = `localhost:${pStandby}`;
    console.log(`      (harness: KDC realm + keytabs + krb5kdc ${tKdc - t0} ms, simulator + httpd ${Date.now() - tKdc} ms)`);
  });

  afterEach(() => {
    for (const k of KRB_ENV) {
      if (savedEnv?.[k] === undefined) delete process.env[k];
      else process.env[k] = savedEnv[k];
    }
  });

  after(async () => {
    await httpd?.stop();
    await kdc?.stop();
    await sim?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  function kerberosKeys(extra: Record<string, string> = {}): Record<string, string> {
    return {
      'security.kerberos.login.keytab': keytab,
      'security.kerberos.login.principal': `sidecar@${REALM}`,
      'security.kerberos.krb5-conf.path': kdc.krb5Conf,
      ...extra,
    };
  }

  async function sidecarWith(define: Record<string, string>, logger = silentLogger): Promise<Sidecar> {
    const config = loadConfig({
      env: {},
      dynamic: {
        'rest.port': '0',
        'cluster.resource-blocklist.store.sqlite.path': path.join(dir, `blocklist-${Date.now()}-${Math.random()}.db`),
        'yarn.resourcemanager.webapp.address': active,
        'cluster.resource-blocklist.amrm-proxy.address': sim.url,
        ...define,
      },
    });
    return startSidecar({ config, clock: systemClock, logger });
  }

  async function until(what: string, ok: () => boolean, timeoutMs = 10_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!ok()) {
      if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it('httpd really enforces SPNEGO: without a ticket the RM face answers 401 Negotiate', async () => {
    const res = await fetch(`http://${active}/ws/v1/cluster/info`);
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Negotiate/);
  });

  it('the sidecar syncs through the SPNEGO-protected RM: a block reaches the simulator\'s proxy', async () => {
    const s = await sidecarWith(kerberosKeys());
    try {
      const host = sim.cluster.nodes[2].host;
      const put = await fetch(`${s.url}/blocklist/nodes/${host}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'MARK_BLOCKED', cause: 'kerberos e2e', endTimestamp: Date.now() + 3_600_000 }),
      });
      assert.ok(put.status >= 200 && put.status < 300, `PUT answered ${put.status}: ${await put.text()}`);
      await until('the block in the proxy', () => sim.cluster.clientBlacklistView().includes(host));
      assert.ok(s.sync.synced());
      assert.match(await s.sync.metrics.text(), /^blocklist_reconcile_passes_total\{result="failure"\} 0$/m);
    } finally {
      await s.close();
    }
  });

  it('a standby RM\'s 307 is followed with a ticket for the active RM (HTTP/localhost, then HTTP/127.0.0.1)', async () => {
    const login = new KerberosLogin({ principal: `sidecar@${REALM}`, keytab, krb5Conf: kdc.krb5Conf, probeHost: 'localhost', clock: systemClock });
    try {
      await login.start();
      const rm = new ResourceManagerClient({ addresses: [standby, active], auth: login });
      const info = await rm.clusterInfo();
      assert.equal(info.haState, 'ACTIVE');
      assert.equal(rm.activeAddress, `http://${active}`, 'the active RM is remembered');
      // Each virtual host holds only its own key: a token for the wrong principal would have got a 401.
      const log = kdc.log();
      assert.match(log, new RegExp(`sidecar@${REALM} for HTTP/localhost@${REALM}`));
      assert.match(log, new RegExp(`sidecar@${REALM} for HTTP/127\\.0\\.0\\.1@${REALM}`));
      // And the standby itself refuses a token made for the active RM's principal.
      const wrong = await login.authorize('127.0.0.1');
      const res = await fetch(`http://${standby}/ws/v1/cluster/info`, { headers: { Authorization: wrong.header }, redirect: 'manual' });
      assert.equal(res.status, 401);
    } finally {
      await login.stop();
    }
  });

  it('the node list, fetched by the worker thread, carries the ticket too: standby 307, then the active RM', async () => {
    const login = new KerberosLogin({ principal: `sidecar@${REALM}`, keytab, krb5Conf: kdc.krb5Conf, probeHost: 'localhost', clock: systemClock });
    try {
      await login.start();
      const rm = new ResourceManagerClient({ addresses: [standby, active], auth: login });
      const nodes = await rm.nodes();
      assert.deepEqual(new Set(nodes.map((n) => n.host)), new Set(sim.cluster.nodes.map((n) => n.host)));
      assert.equal(rm.activeAddress, `http://${active}`);
    } finally {
      await login.stop();
    }
  });

  it('a ticket that expires mid-run (3 s lifetime set in the KDC) is renewed before it runs out, without a failed pass', async function () {
    this.timeout(20_000);
    kdc.addPrincipal('short', { maxlife: '3 seconds' });
    const shortKeytab = kdc.exportKeytab(path.join(dir, 'short.keytab'), 'short');
    const { logger, lines } = capturingLogger();
    const s = await sidecarWith(
      kerberosKeys({
        'security.kerberos.login.keytab': shortKeytab,
        'security.kerberos.login.principal': `short@${REALM}`,
        // The RM is read every 200 ms, so requests keep coming across the ticket's end.
        'cluster.resource-blocklist.yarn.refresh-interval': '200 ms',
        'cluster.resource-blocklist.poll-interval': '200 ms',
        'cluster.resource-blocklist.max-blocked-fraction': '1',
      }),
      logger,
    );
    try {
      const started = Date.now();
      const rmBefore = sim.cluster.counters.rmRequests;
      const logins = (): string[] => lines.filter((l) => /Kerberos: logged in as short@BLOCKLIST\.TEST/.test(l));
      assert.equal(logins().length, 1);
      const first = JSON.parse(logins()[0]) as { ticketExpires: string; renewAt: string };
      const firstEnd = Date.parse(first.ticketExpires);
      assert.ok(firstEnd - started <= 3_500, `the KDC gave a ${firstEnd - started} ms ticket`);
      const block = async (host: string): Promise<void> => {
        const put = await fetch(`${s.url}/blocklist/nodes/${host}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ action: 'MARK_BLOCKED', cause: 'ticket renewal', endTimestamp: Date.now() + 3_600_000 }),
        });
        assert.ok(put.ok, await put.text());
        await until(`${host} in the proxy`, () => sim.cluster.clientBlacklistView().includes(host)).catch((e: Error) => assert.fail(`${e.message}\n${lines.slice(-30).join("\n")}`));
      };
      // A block before (so passes keep reading the RM's nodes), then past the first ticket's end another.
      await block(sim.cluster.nodes[3].host);
      await until('the first ticket to expire', () => Date.now() > firstEnd + 700, 8_000);
      const rmAtExpiry = sim.cluster.counters.rmRequests;
      await block(sim.cluster.nodes[4].host);
      await until("an RM read after the first ticket's end", () => sim.cluster.counters.rmRequests > rmAtExpiry, 8_000);

      const renewals = logins().filter((l) => /\(renewal\)/.test(l));
      assert.ok(renewals.length >= 1, `no renewal logged: ${lines.join('\n')}`);
      const renewedAt = Date.parse((JSON.parse(renewals[0]) as { timestamp: string }).timestamp);
      assert.ok(renewedAt < firstEnd, `renewed at ${new Date(renewedAt).toISOString()}, after the ticket's end ${first.ticketExpires}`);
      assert.ok(rmAtExpiry > rmBefore && sim.cluster.counters.rmRequests > rmAtExpiry, `the RM was read before and after the first ticket's end (${rmBefore} → ${rmAtExpiry} → ${sim.cluster.counters.rmRequests})`);
      assert.match(await s.sync.metrics.text(), /^blocklist_reconcile_passes_total\{result="failure"\} 0$/m);
      assert.ok(!lines.some((l) => /RM refused the Kerberos ticket/.test(l)), 'no request went out with an expired ticket');
    } finally {
      await s.close();
    }
  });

  it('a KDC restart across the renewal and the end of the ticket: no RM read gets through while it is down, and reads resume once it is back, without a sidecar restart', async function () {
    this.timeout(20_000);
    kdc.addPrincipal('restart', { maxlife: '3 seconds' });
    const restartKeytab = kdc.exportKeytab(path.join(dir, 'restart.keytab'), 'restart');
    const { logger, lines } = capturingLogger();
    const s = await sidecarWith(
      kerberosKeys({
        'security.kerberos.login.keytab': restartKeytab,
        'security.kerberos.login.principal': `restart@${REALM}`,
        // The RM is read every 200 ms, so requests keep coming while the KDC is down and after.
        'cluster.resource-blocklist.yarn.refresh-interval': '200 ms',
        'cluster.resource-blocklist.poll-interval': '200 ms',
        'cluster.resource-blocklist.retry.max-backoff': '500 ms',
        'cluster.resource-blocklist.max-blocked-fraction': '1',
      }),
      logger,
    );
    let kdcUp = true;
    try {
      const logins = (): string[] => lines.filter((l) => /Kerberos: logged in as restart@BLOCKLIST\.TEST/.test(l));
      // A block in force, so passes keep reading the RM (an idle sidecar does not read it).
      const first = sim.cluster.nodes[1].host;
      const put1 = await fetch(`${s.url}/blocklist/nodes/${first}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'MARK_BLOCKED', cause: 'before the KDC restart' }) });
      assert.ok(put1.ok, await put1.text());
      await until('the first block in the proxy', () => sim.cluster.clientBlacklistView().includes(first));
      await kdc.stop();
      kdcUp = false;
      // The ticket in hand when the KDC went (a renewal may have come first on a slow machine).
      const firstEnd = Date.parse((JSON.parse(logins()[logins().length - 1]) as { ticketExpires: string }).ticketExpires);
      // Down through the renewal (at 80 %) and past the ticket's end and the RM's 2 s skew:
      // httpd lets no request through to the RM face (the simulator counts only those).
      await until('the ticket to end while the KDC is down', () => Date.now() > firstEnd + 2_500, 8_000);
      const rmDown = sim.cluster.counters.rmRequests;
      await new Promise((r) => setTimeout(r, 600));
      assert.equal(sim.cluster.counters.rmRequests, rmDown, 'no RM read gets through without a ticket');
      assert.ok(lines.some((l) => /Kerberos: renewal failed, retrying: .*Cannot contact any KDC/.test(l)), 'the failed renewal is logged with the reason');
      const loginsDown = logins().length;

      await kdc.start();
      kdcUp = true;
      await until('an authenticated RM read after the KDC came back', () => sim.cluster.counters.rmRequests > rmDown, 8_000).catch((e: Error) => assert.fail(`${e.message}\n${lines.slice(-10).join('\n')}`));
      // MIT itself gets a new ticket from the client keytab for the first request; the login's own
      // retry (at most MIN_RENEW_MS later) puts the renewal schedule back on the new ticket.
      await until('a fresh login once the KDC answered, and the renewal schedule back', () => logins().length > loginsDown, 5_000);
      const host = sim.cluster.nodes[2].host;
      const put = await fetch(`${s.url}/blocklist/nodes/${host}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'MARK_BLOCKED', cause: 'after the KDC restart' }) });
      assert.ok(put.ok, await put.text());
      await until('a block after the restart in the proxy', () => sim.cluster.clientBlacklistView().includes(host));
    } finally {
      if (!kdcUp) await kdc.start();
      await s.close();
    }
  });

  it('mutual authentication: an answer whose Negotiate token does not verify is refused', async () => {
    // A server that accepts anything and answers with a token it could not have made without the RM's key.
    const impostor = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'www-authenticate': `Negotiate ${Buffer.from('not an AP-REP').toString('base64')}` });
      res.end('{"clusterInfo":{"id":1,"haState":"ACTIVE"}}');
    });
    await new Promise<void>((r) => impostor.listen(0, '127.0.0.1', r));
    const login = new KerberosLogin({ principal: `sidecar@${REALM}`, keytab, krb5Conf: kdc.krb5Conf, probeHost: '127.0.0.1', clock: systemClock });
    try {
      await login.start();
      const rm = new ResourceManagerClient({ addresses: `127.0.0.1:${(impostor.address() as AddressInfo).port}`, auth: login });
      await assert.rejects(rm.clusterInfo(), /failed Kerberos mutual authentication/);
      // The same for the node list, whose request the worker thread makes.
      await assert.rejects(rm.nodes(), /failed Kerberos mutual authentication/);
    } finally {
      await login.stop();
      await new Promise((r) => impostor.close(r));
    }
  });

  it('a wrong keytab is a clear start-up error (the CLI exits non-zero naming the principal, the keytab and what the KDC said)', async () => {
    kdc.addPrincipal('rotated');
    const old = kdc.exportKeytab(path.join(dir, 'rotated-old.keytab'), 'rotated');
    kdc.kadmin(`cpw -randkey rotated@${REALM}`); // the key changes on the KDC: the exported keytab is now wrong
    const r = await runCli(
      ['sidecar', ...Object.entries(kerberosKeys({
        'security.kerberos.login.keytab': old,
        'security.kerberos.login.principal': `rotated@${REALM}`,
        'rest.port': '0',
        'cluster.resource-blocklist.store.sqlite.path': path.join(dir, 'cli.db'),
        'yarn.resourcemanager.webapp.address': active,
        'cluster.resource-blocklist.amrm-proxy.address': sim.url,
      })).map(([k, v]) => `-D${k}=${v}`)],
    );
    assert.notEqual(r.code, 0, r.stdout);
    assert.match(r.stderr, new RegExp(`cannot start: Kerberos login as rotated@${REALM} from keytab ${old.replace(/[.]/g, '\\.')} failed`));
    assert.match(r.stderr, /does not match the KDC's key for rotated@BLOCKLIST\.TEST/);
    assert.doesNotMatch(r.stdout, /listening/);

    // A keytab without the principal, and no keytab at all: refused before any pass, each saying why.
    await assert.rejects(sidecarWith(kerberosKeys({ 'security.kerberos.login.principal': `nobody@${REALM}` })), /Kerberos login as nobody@BLOCKLIST\.TEST .*(has no key for|does not know)/);
    await assert.rejects(sidecarWith(kerberosKeys({ 'security.kerberos.login.keytab': path.join(dir, 'missing.keytab') })), /security\.kerberos\.login\.keytab .*missing\.keytab cannot be read/);
  });

  it('a 401 for a stale ticket is retried once after a fresh login; a second 401 is reported with principal, RM and service principal', async () => {
    const login = new KerberosLogin({ principal: `sidecar@${REALM}`, keytab, krb5Conf: kdc.krb5Conf, probeHost: '127.0.0.1', clock: systemClock });
    const { logger, lines } = capturingLogger();
    try {
      await login.start();
      const rm = new ResourceManagerClient({ addresses: active, auth: login, logger });
      await rm.clusterInfo(); // the cache now holds a ticket for HTTP/127.0.0.1 with the current key
      // The RM's key is changed and httpd gets the new keytab (a key rotation): the cached ticket is stale.
      kdc.kadmin(`cpw -randkey HTTP/127.0.0.1@${REALM}`);
      kdc.exportKeytab(path.join(dir, 'http-active.keytab'), 'HTTP/127.0.0.1');
      await rm.clusterInfo();
      assert.ok(lines.some((l) => /RM refused the Kerberos ticket; logging in again/.test(l)), 'the first 401 led to a fresh login');
      assert.equal(login.status().logins, 2);

      // httpd gets a key the KDC no longer issues tickets for (rotated twice, exported once): the cached
      // ticket is refused, and so is the fresh one.
      kdc.kadmin(`cpw -randkey HTTP/127.0.0.1@${REALM}`);
      kdc.exportKeytab(path.join(dir, 'http-active.keytab'), 'HTTP/127.0.0.1');
      kdc.kadmin(`cpw -randkey HTTP/127.0.0.1@${REALM}`);
      await assert.rejects(rm.clusterInfo(), (e: unknown) => {
        assert.ok(e instanceof YarnCallError);
        assert.equal(e.status, 401);
        assert.match(e.message, new RegExp(`401 from http://${active.replace(/[.]/g, '\\.')}/ws/v1/cluster/info`));
        assert.match(e.message, new RegExp(`refused the SPNEGO ticket of sidecar@${REALM} for HTTP/127\\.0\\.0\\.1@${REALM} even after a fresh login`));
        return true;
      });
    } finally {
      await login.stop();
      // Give httpd the KDC's current key again for the tests after this one.
      kdc.exportKeytab(path.join(dir, 'http-active.keytab'), 'HTTP/127.0.0.1');
    }
  });
});
