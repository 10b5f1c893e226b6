/**
 * A proxy (or AM) restart is repaired: the simulator runs as its own process, is killed with
 * SIGKILL and started again on the same port with the same attempt and an empty blacklist. The
 * engine (FakeClock for its timers, real HTTP to the process) must put the blocked node back within
 * two poll intervals of the proxy answering again, and must not claim `applied` meanwhile.
 */
import { strict as assert } from 'node:assert';
import { ChildProcess, spawn } from 'node:child_process';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { SyncEngine } from '../../src/sync/engine';
import { createMetrics } from '../../src/metrics/metrics';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { AmrmProxyClient } from '../../src/yarn/amrm-client';
import { itemSyncStatus } from '../../src/api/status-presenter';
import { cliMain } from '../support/paths';
import { freePort } from '../support/zookeeper';
import { http } from '../support/sidecar';
import { FlakyStore, nodeItem, TEST_SETTINGS } from './fakes';

const T0 = 1_652_313_600_000;
const HOST = 'node0002.sim.local';

function startSim(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [cliMain, 'yarn-sim', '--port', String(port), '--nodes', '6', '--containers', '0', '--tick', '0', '--seed', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('yarn-sim did not start within 10 s')), 10_000);
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('listening')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.on('exit', (code) => reject(new Error(`yarn-sim exited with ${code}`)));
  });
}

function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('sync/engine: a SIGKILLed and restarted proxy is repaired', function () {
  this.timeout(30_000);
  let sim: ChildProcess | undefined;
  let engine: SyncEngine | undefined;
  const store = new FlakyStore();

  after(async () => {
    await engine?.stop();
    if (sim) await kill9(sim);
    await store.close();
  });

  it('the blocked node is back on the blacklist within two poll intervals; status says pending, never applied, while it is not', async () => {
    const port = await freePort();
    sim = await startSim(port);
    const url = `http://127.0.0.1:${port}`;
    const clock = new FakeClock(T0);
    engine = new SyncEngine({
      store,
      rm: new ResourceManagerClient({ addresses: url, timeoutMs: 2000 }),
      proxy: new AmrmProxyClient({ address: url, timeoutMs: 2000 }),
      clock,
      logger: silentLogger,
      settings: TEST_SETTINGS,
      metrics: createMetrics(),
    });
    const e = engine;
    const step = async (ms: number) => {
      clock.advance(ms);
      await e.idle();
    };
    const proxyList = async () => ((await http(url, 'GET', '/amrm/v1/blacklist')).body as { blacklist: string[] }).blacklist;
    await e.start();
    await store.put(nodeItem(HOST));
    e.kick('test');
    await e.idle();
    assert.deepEqual(await proxyList(), [HOST]);

    await kill9(sim);
    await step(TEST_SETTINGS.pollIntervalMs);
    assert.equal(itemSyncStatus(e.view(), HOST, clock.now())?.state, 'pending', 'the proxy cannot be read: not applied');

    sim = await startSim(port);
    assert.deepEqual(await proxyList(), [], 'the restarted proxy starts empty');
    assert.equal(itemSyncStatus(e.view(), HOST, clock.now())?.state, 'pending');
    await step(TEST_SETTINGS.pollIntervalMs);
    await step(TEST_SETTINGS.pollIntervalMs);
    assert.deepEqual(await proxyList(), [HOST]);
    assert.equal(itemSyncStatus(e.view(), HOST, clock.now())?.state, 'applied');
  });
});
