/**
 * The ZooKeeper store on an ensemble that requires SASL (Kerberos), all real: the suite's MIT KDC
 * (harness.ts), the Debian ZooKeeper with SASLAuthenticationProvider and
 * `enforce.auth.enabled=true` / `enforce.auth.schemes=sasl` (3.8's keys) and a JAAS `Server`
 * section holding zookeeper/127.0.0.1's key, and the sidecar's login from its keytab with a 3 s
 * ticket (so it renews every 2.4 s). docs/zookeeper.md (SASL) and docs/security.md describe the
 * same set-up for operators.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zk from 'node-zookeeper-client';
import { systemClock } from '../../src/core/clock';
import { Logger, LogFields, silentLogger } from '../../src/core/logger';
import { KerberosLogin } from '../../src/security/kerberos';
import { ZookeeperGssapi } from '../../src/security/zookeeper-gssapi';
import { listeningUrl } from '../support/child-sidecar';
import { cliMain } from '../support/paths';
import { StoreUnavailableError } from '../../src/store/store';
import { ZookeeperStore } from '../../src/store/zookeeper/zookeeper-store';
import { ZkSession } from '../../src/store/zookeeper/session';
import { enableSasl } from '../../src/store/zookeeper/sasl';
import { ZkLayout } from '../../src/store/zookeeper/paths';
import { ZkCluster, requireZookeeper } from '../support/zookeeper';
import { pollUntil } from '../support/wait';
import { http } from '../support/sidecar';
import { item } from '../store/conformance';
import { Kdc, REALM, kerberosTempDir, requireKerberos, startKdc } from './harness';

const SERVER = `zookeeper/127.0.0.1@${REALM}`;
const ME = `blocklist@${REALM}`;

/** A logger that keeps its lines (the login's renewals, the session's errors). */
function keep(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const put = (level: string) => (message: string, fields?: LogFields) => void lines.push(`${level} ${message} ${fields ? JSON.stringify(fields) : ''}`);
  const l = { lines, error: put('error'), warn: put('warn'), info: put('info'), debug: put('debug'), log: (level: string, m: string, f?: LogFields) => put(level)(m, f), child: () => l };
  return l as Logger & { lines: string[] };
}

/** A bare client's call as a promise (the test looks at ACLs the store never reads). */
function aclOf(c: zk.Client, p: string): Promise<zk.ACL[]> {
  return new Promise((resolve, reject) => c.getACL(p, (err, acls) => (err ? reject(err) : resolve(acls))));
}
function dataOf(c: zk.Client, p: string): Promise<Buffer> {
  return new Promise((resolve, reject) => c.getData(p, (err, data) => (err ? reject(err) : resolve(data))));
}
function connected(c: zk.Client): Promise<void> {
  return new Promise((resolve) => {
    c.once('connected', () => resolve());
    c.connect();
  });
}

describe('ZooKeeper store on a SASL-only ensemble (real KDC, real ZooKeeper)', function () {
  this.timeout(60_000);
  let dir: string;
  let kdc: Kdc;
  let cluster: ZkCluster;
  let login: KerberosLogin;
  let mechanism: ZookeeperGssapi;
  const log = keep();
  const keytab = (name: string) => path.join(dir, `${name.replace(/\W/g, '_')}.keytab`);

  before(async function () {
    requireKerberos(this);
    requireZookeeper(this);
    dir = kerberosTempDir();
    kdc = await startKdc(dir);
    kdc.addPrincipal('zookeeper/127.0.0.1');
    kdc.addPrincipal('blocklist', { maxlife: '3 seconds' });
    // The sidecar process's principal: its ticket runs out while it is paused (below).
    kdc.addPrincipal('other', { maxlife: '3 seconds' });
    for (const p of ['zookeeper/127.0.0.1', 'blocklist', 'other']) kdc.exportKeytab(keytab(p), p);
    const jaas = path.join(dir, 'zk-jaas.conf');
    fs.writeFileSync(
      jaas,
      `Server {\n  com.sun.security.auth.module.Krb5LoginModule required\n  useKeyTab=true\n  keyTab="${keytab('zookeeper/127.0.0.1')}"\n  storeKey=true\n  useTicketCache=false\n  principal="${SERVER}";\n};\n`,
    );
    cluster = await ZkCluster.start(1, 30_000, {
      config: ['authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider', 'enforce.auth.enabled=true', 'enforce.auth.schemes=sasl'],
      jvm: [`-Djava.security.auth.login.config=${jaas}`, `-Djava.security.krb5.conf=${kdc.krb5Conf}`],
    });
    login = new KerberosLogin({ principal: ME, keytab: keytab('blocklist'), krb5Conf: kdc.krb5Conf, probeHost: '127.0.0.1', probeService: 'zookeeper@127.0.0.1', clock: systemClock, logger: log });
    await login.start();
    mechanism = new ZookeeperGssapi({ login, serviceName: 'zookeeper', keytab: keytab('blocklist') });
  });

  after(async () => {
    await login?.stop();
    await cluster?.stop();
    await kdc?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const session = (over: Partial<ConstructorParameters<typeof ZkSession>[0]> = {}) =>
    new ZkSession({ hosts: cluster.connectString(), sessionTimeoutMs: 10_000, operationTimeoutMs: 3000, connectTimeoutMs: 2000, sasl: { mechanism, acl: [] }, logger: log, ...over });
  const open = (root: string, s: ZkSession) => ZookeeperStore.open({ quorum: cluster.connectString(), root, sessionTimeoutMs: 10_000, operationTimeoutMs: 3000, session: s, logger: log });

  it('refuses a client without SASL: the ensemble requires it', async () => {
    const plain = new ZkSession({ hosts: cluster.connectString(), sessionTimeoutMs: 10_000, operationTimeoutMs: 1500, logger: silentLogger });
    try {
      await assert.rejects(() => plain.getChildren('/', 1500), (e: unknown) => e instanceof Error);
    } finally {
      await plain.close();
    }
    await pollUntil('the server says why', () => /does not match with any of the expected authentication scheme \[sasl\], closing session/.test(cluster.logTail(1, 20_000)), 5000);
  });

  it("works with SASL: items, records, version; every znode it creates is under the sasl ACL of the sidecar's principal", async () => {
    const s = session();
    const store = await open('/sasl-store', s);
    try {
      assert.equal((await store.add({ item: item('n1'), allowMerge: false })).outcome, 'created');
      assert.equal((await store.add({ item: item('n1', { cause: 'more' }), allowMerge: true })).outcome, 'merged');
      assert.deepEqual((await store.list()).map((i) => i.id), ['n1']);
      await store.writeRecord!('rec', 'v');
      assert.equal(await store.readRecord!('rec'), 'v');
      // A bare client with the same SASL extension reads the ACLs back.
      const c = zk.createClient(cluster.connectString(), { sessionTimeout: 5000 });
      enableSasl(c, { mechanism, log: () => silentLogger });
      await connected(c);
      try {
        const layout = new ZkLayout('', '/sasl-store');
        for (const p of ['/sasl-store', layout.items, layout.itemPath('n1'), layout.clock, layout.recordPath('rec')]) {
          const acls = await aclOf(c, p);
          // The typings call it perms; the library, permission.
          assert.deepEqual(acls.map((a) => `${a.id.scheme}:${a.id.id}:${(a as unknown as { permission: number }).permission}`), [`sasl:${ME}:31`], p);
        }
      } finally {
        c.close();
      }
    } finally {
      await store.close();
      await s.close();
    }
  });

  it('across a ticket renewal and a server restart: the new connection logs in with the renewed ticket', async () => {
    const s = session();
    const store = await open('/sasl-renew', s);
    try {
      await store.add({ item: item('before'), allowMerge: false });
      const first = login.status();
      // The 3 s ticket is renewed at 80 %; wait until the first one has run out.
      await pollUntil('a renewal, and the first ticket past its end', () => login.status().logins > first.logins && Date.now() > (first.ticketExpiresAt ?? 0) + 200, 10_000);
      const tgsBefore = (kdc.log().match(/TGS_REQ.*zookeeper\/127\.0\.0\.1/g) ?? []).length;
      await cluster.kill(1);
      cluster.restart(1);
      await cluster.waitReady([1]);
      await pollUntil('a write after the restart', async () => {
        try {
          await store.add({ item: item('after-restart'), allowMerge: false });
          return true;
        } catch (e) {
          if (!(e instanceof StoreUnavailableError)) throw e;
          return false;
        }
      }, 20_000);
      assert.ok((kdc.log().match(/TGS_REQ.*zookeeper\/127\.0\.0\.1/g) ?? []).length > tgsBefore, 'the new connection asked the KDC for a ticket with the renewed login');

      assert.deepEqual((await store.list()).map((i) => i.id), ['after-restart', 'before']);
    } finally {
      await store.close();
      await s.close();
    }
  });

  it('a login that cannot get a ticket (unknown service) fails the calls within the operation timeout and says why', async () => {
    const lines = keep();
    const wrong = new ZookeeperGssapi({ login, serviceName: 'nosuch', keytab: keytab('blocklist') });
    const s = session({ sasl: { mechanism: wrong, acl: [] }, logger: lines, operationTimeoutMs: 1500 });
    try {
      const t0 = performance.now();
      await assert.rejects(() => s.getChildren('/', 1500), (e: unknown) => e instanceof Error);
      assert.ok(performance.now() - t0 < 2500);
      await pollUntil('the reason logged', () => lines.lines.some((l) => /SASL \(GSSAPI\) login to 127\.0\.0\.1 failed: .*Server .*not found in Kerberos database.*no service principal nosuch\/127\.0\.0\.1/.test(l)), 5000);
      assert.ok(lines.lines.some((l) => /zookeeper authentication failed \(check the Kerberos login/.test(l)), lines.lines.join('\n'));
      await pollUntil('a new client tried after connect-timeout', () => lines.lines.some((l) => /no session within 2000 ms .*replacing the client/.test(l)), 6000);
    } finally {
      await s.close();
    }
  });

  it("a sidecar configured for SASL serves the API on the ensemble, is closed to another principal's znodes, and logs in again after its session expired and its ticket ran out (SIGSTOP past both)", async () => {
    // One Kerberos login per process (its environment is process-wide): the suite's ends here, and
    // the sidecar runs as a child process with its own.
    await login.stop();
    const flags = Object.entries({
      'rest.port': '0',
      'log.format': 'json',
      'cluster.resource-blocklist.store.type': 'zookeeper',
      'cluster.resource-blocklist.store.zookeeper.quorum': cluster.connectString(),
      'cluster.resource-blocklist.store.zookeeper.root': '/sasl-sidecar',
      'cluster.resource-blocklist.store.zookeeper.session-timeout': '2 s',
      'cluster.resource-blocklist.store.zookeeper.connect-timeout': '2 s',
      'cluster.resource-blocklist.store.zookeeper.sasl.enabled': 'true',
      'security.kerberos.login.keytab': keytab('other'),
      'security.kerberos.login.principal': `other@${REALM}`,
      'security.kerberos.krb5-conf.path': kdc.krb5Conf,
    }).map(([k, v]) => `-D${k}=${v}`);
    const child = spawn(process.execPath, [cliMain, 'sidecar', ...flags], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, BLOCKLIST_CONFIG_FILE: '', CONTAINER_ID: '' } });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    try {
      const { url, output } = await listeningUrl(child, 20_000);
      assert.equal((await http(url, 'PUT', '/blocklist/nodes/n7', { action: 'MARK_BLOCKED', cause: 'disk' })).status, 201);
      // Paused past the session timeout, as a long GC pause or a frozen VM: the ensemble ends the
      // session, and the 3 s ticket runs out meanwhile; the new session logs in on a new one.
      child.kill('SIGSTOP');
      await new Promise((r) => setTimeout(r, 3500));
      child.kill('SIGCONT');
      await pollUntil('a new session, logged in again', () => /session expired; opening a new session/.test(output()), 15_000);
      await pollUntil('a block made after the expiry', async () => (await http(url, 'PUT', '/blocklist/nodes/n8', { action: 'MARK_BLOCKED', cause: 'disk' })).status === 201, 15_000);
      assert.deepEqual(Object.keys((await http(url, 'GET', '/blocklist')).body as object), ['n7', 'n8']);
      assert.equal((output().match(/SASL \(GSSAPI\) login .* failed/g) ?? []).length, 0, output());
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    // Another principal's client (other@, the sidecar's) cannot read what blocklist@ made.
    const other = new KerberosLogin({ principal: `other@${REALM}`, keytab: keytab('other'), krb5Conf: kdc.krb5Conf, probeHost: '127.0.0.1', probeService: 'zookeeper@127.0.0.1', clock: systemClock });
    await other.start();
    const c = zk.createClient(cluster.connectString(), { sessionTimeout: 5000 });
    enableSasl(c, { mechanism: new ZookeeperGssapi({ login: other, serviceName: 'zookeeper', keytab: keytab('other') }), log: () => silentLogger });
    await connected(c);
    try {
      await assert.rejects(() => dataOf(c, new ZkLayout('', '/sasl-store').itemPath('n1')), /NO_AUTH/);
      assert.ok((await dataOf(c, new ZkLayout('', '/sasl-sidecar').itemPath('n7'))).length > 0, "its own sidecar's znodes it reads");
    } finally {
      c.close();
      await other.stop();
    }
  });
});
