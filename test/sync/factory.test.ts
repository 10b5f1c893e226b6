import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { loadConfig } from '../../src/config/config';
import { createSync } from '../../src/sidecar/sync-factory';
import { startSimulator } from '../../src/sim/server';
import { FlakyStore, nodeItem } from './fakes';
import { sidecarStatus } from '../../src/api/status-presenter';

const T0 = 1_652_313_600_000;

describe('sidecar/sync-factory: which engine the sidecar gets', () => {
  let store: FlakyStore;
  beforeEach(() => {
    store = new FlakyStore();
  });
  afterEach(async () => {
    await store.close();
  });

  it('no YARN configured → API-only (NoSync), metrics still count from the store', async () => {
    const clock = new FakeClock(T0);
    const h = await createSync({ config: loadConfig({ env: {} }), store, clock, logger: silentLogger, env: {} });
    assert.equal(h.mode, 'none');
    await h.start();
    await store.put(nodeItem('node1'));
    assert.match(await h.metrics.text(), /^numBlockedNodes 1$/m);
    assert.equal(h.synced(), true);
    await h.stop();
  });

  it('enabled=false → nothing pushed and nothing counted', async () => {
    const config = loadConfig({ env: {}, dynamic: { 'cluster.resource-blocklist.enabled': 'false', 'yarn.resourcemanager.webapp.address': '127.0.0.1:1', 'cluster.resource-blocklist.amrm-proxy.address': '127.0.0.1:1' } });
    const h = await createSync({ config, store, clock: new FakeClock(T0), logger: silentLogger, env: {} });
    assert.equal(h.mode, 'none');
    assert.equal(sidecarStatus(h.view(), T0).enabled, false);
    await store.put(nodeItem('node1'));
    assert.match(await h.metrics.text(), /^numBlockedNodes 0$/m);
  });

  it("enabled=false with a proxy configured → this sidecar's own entries are withdrawn from YARN at start, other owners' stay", async () => {
    const sim = await startSimulator({ port: 0, nodes: 6, containers: 0, tickMs: 0 });
    try {
      const [h1, h2, h3] = sim.cluster.nodes.map((n) => n.host);
      sim.cluster.setOwnerBlacklist('blocklist', [h1, h2]);
      sim.cluster.setOwnerBlacklist('am', [h3]);
      const config = loadConfig({ env: {}, dynamic: { 'cluster.resource-blocklist.enabled': 'false', 'yarn.resourcemanager.webapp.address': sim.url, 'cluster.resource-blocklist.amrm-proxy.address': sim.url } });
      const h = await createSync({ config, store, clock: new FakeClock(T0), logger: silentLogger, env: {} });
      await h.start();
      assert.deepEqual(sim.cluster.ownersView(), { am: [h3] });
      assert.deepEqual(sim.cluster.clientBlacklistView(), [h3]);
      await h.stop();
    } finally {
      await sim.close();
    }
  });

  it('YARN configured → the real engine over HTTP; the app id comes from the proxy when not configured', async () => {
    const sim = await startSimulator({ port: 0, nodes: 6, containers: 6, tickMs: 0 });
    try {
      const config = loadConfig({
        env: {},
        dynamic: { 'yarn.resourcemanager.webapp.address': sim.url, 'cluster.resource-blocklist.amrm-proxy.address': sim.url },
      });
      const clock = new FakeClock(T0);
      const h = await createSync({ config, store, clock, logger: silentLogger, env: {} });
      assert.equal(h.mode, 'engine');
      await h.start();
      const host = sim.cluster.nodes[1].host;
      await store.put(nodeItem(host));
      h.kick('test');
      for (let i = 0; i < 100 && !sim.cluster.clientBlacklistView().includes(host); i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(sim.cluster.clientBlacklistView(), [host]);
      assert.equal(sidecarStatus(h.view(), T0).applicationId, sim.cluster.applicationId);
      assert.ok(h.synced());
      assert.match(await h.metrics.text(), /^numBlockedNodes 1$/m);
      await h.stop();
    } finally {
      await sim.close();
    }
  });

  it('CONTAINER_ID names the application; a malformed one fails start-up', async () => {
    const config = loadConfig({ env: {}, dynamic: { 'yarn.resourcemanager.webapp.address': '127.0.0.1:1', 'cluster.resource-blocklist.amrm-proxy.address': '127.0.0.1:1' } });
    const ok = await createSync({ config, store, clock: new FakeClock(T0), logger: silentLogger, env: { CONTAINER_ID: 'container_e01_1652313600000_0042_01_000001' } });
    assert.equal(sidecarStatus(ok.view(), T0).applicationId, 'application_1652313600000_0042');
    await assert.rejects(createSync({ config, store, clock: new FakeClock(T0), logger: silentLogger, env: { CONTAINER_ID: 'nonsense' } }), /CONTAINER_ID/);
  });
});
