/**
 * Snags a newcomer hit on the first day (issue: "newcomer snags"), each through the real executable
 * or a real server: the running sidecar's configuration, the port that is really taken, the
 * command to use for a task manager, and a banner that says what the kept store holds.
 */
import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import * as path from 'node:path';
import { TestSidecar, http, startTestSidecar, tempDir } from '../support/sidecar';
import { PortInUseError, startLocalCluster } from '../../src/quickstart/local-cluster';
import { expectCode, runCli } from './run';

describe('cli: newcomer snags', function () {
  this.timeout(60_000);
  let s: TestSidecar;

  before(async () => {
    s = await startTestSidecar({ define: { 'cluster.resource-blocklist.store.zookeeper.auth': 'ops:s3cret', 'cluster.resource-blocklist.poll-interval': '750 ms' } });
  });
  after(async () => {
    await s?.close();
  });

  it('GET /config answers the running configuration with its sources, secrets masked', async () => {
    const r = await http(s.url, 'GET', '/config');
    assert.equal(r.status, 200);
    const entries = (r.body as { config: { key: string; value: string; source: string }[] }).config;
    const byKey = new Map(entries.map((e) => [e.key, e]));
    assert.equal(byKey.get('cluster.resource-blocklist.poll-interval')?.value, '750');
    assert.match(byKey.get('cluster.resource-blocklist.poll-interval')?.source ?? '', /dynamic|-D|flag/i);
    assert.equal(byKey.get('cluster.resource-blocklist.store.zookeeper.auth')?.value, '******');
    assert.ok(!r.text.includes('s3cret'), 'a secret never leaves the process');
  });

  it("`blocklist config` shows the running sidecar's configuration, --local the file's", async () => {
    const cwd = tempDir('blocklist-cfg-');
    const running = expectCode(await runCli(['config'], { env: { BLOCKLIST_SERVER: s.url }, cwd }), 0, 'config');
    assert.match(running.stdout, new RegExp(`^# the running sidecar at ${s.url.replace(/[.:/]/g, '\\$&')}`, 'm'));
    assert.match(running.stdout, /^cluster\.resource-blocklist\.store\.sqlite\.path: ".*blocklist\.db"/m);
    assert.match(running.stdout, /^cluster\.resource-blocklist\.poll-interval: 750 /m);
    const local = expectCode(await runCli(['config', '--local'], { env: { BLOCKLIST_SERVER: s.url }, cwd }), 0, 'config --local');
    assert.doesNotMatch(local.stdout, /running sidecar/);
    assert.match(local.stdout, /^cluster\.resource-blocklist\.poll-interval: 1 s {2}\(default\)/m);
    // Nobody listening: the local view, and a word on stderr saying why.
    const none = expectCode(await runCli(['config'], { env: { BLOCKLIST_SERVER: 'http://127.0.0.1:9' }, cwd }), 0, 'config without sidecar');
    assert.match(none.stderr, /no running sidecar to ask/);
    assert.match(none.stdout, /^cluster\.resource-blocklist\.poll-interval: 1 s /m);
  });

  it('`blocklist block NODE/CONTAINER` names the command to use, not the REST endpoint', async () => {
    const r = await runCli(['block', 'node3/container_e01_1652313600000_0001_01_000002', '--cause', 'x'], { env: { BLOCKLIST_SERVER: s.url } });
    expectCode(r, 2, 'block with a task manager id');
    assert.match(r.stderr, /use `blocklist block-tm node3\/container_e01_1652313600000_0001_01_000002`/);
    assert.doesNotMatch(r.stderr, /\/blocklist\/taskmanagers/);
  });

  it('the quickstart says which of its two ports is taken and which flag moves it', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const taken = (blocker.address() as net.AddressInfo).port;
    try {
      const dir = tempDir('blocklist-qs-');
      const opts = { restPort: 0, simPort: 0, sqlitePath: path.join(dir, 'q.db'), nodes: 3, containers: 2, tickMs: 500 };
      await assert.rejects(startLocalCluster({ ...opts, simPort: taken }), (e: unknown) => e instanceof PortInUseError && e.part === 'simulator' && /--sim-port/.test(e.message) && e.message.includes(String(taken)));
      await assert.rejects(startLocalCluster({ ...opts, restPort: taken }), (e: unknown) => e instanceof PortInUseError && e.part === 'sidecar' && /--port N/.test(e.message));
    } finally {
      blocker.close();
    }
  });
});
