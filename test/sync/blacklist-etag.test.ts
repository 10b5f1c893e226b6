/**
 * The engine over real HTTP against the simulator's versioned proxy (ETag, If-None-Match, the
 * versions a push names): after our own push the next poll is a 304, not a full re-read; yet a
 * write by another owner — after our push, or between our read and our push — is seen by the very
 * next read, so the sidecar never keeps a stale belief about who holds what (and never removes a
 * host another owner holds). FakeClock for the engine's timers.
 */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { SyncEngine } from '../../src/sync/engine';
import { createMetrics } from '../../src/metrics/metrics';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { AmrmProxyClient } from '../../src/yarn/amrm-client';
import { AmrmProxy } from '../../src/yarn/types';
import { sidecarStatus } from '../../src/api/status-presenter';
import { http } from '../support/sidecar';
import { FlakyStore, nodeItem, TEST_SETTINGS } from './fakes';

const T0 = 1_652_313_600_000;

describe('sync/engine: a versioned proxy (ETag) saves the re-read after our push, never a write by another owner', function () {
  this.timeout(20_000);
  let sim: RunningSimulator;
  let engine: SyncEngine;
  let store: FlakyStore;
  const clock = new FakeClock(T0);
  /** Runs inside our next push, before it reaches the proxy (another writer racing us). */
  let beforePush: (() => Promise<void>) | undefined;

  beforeEach(async () => {
    sim = await startSimulator({ port: 0, nodes: 8, containers: 0, tickMs: 0, seed: 5 });
    store = new FlakyStore();
    const client = new AmrmProxyClient({ address: sim.url, timeoutMs: 2000 });
    const proxy: AmrmProxy = {
      attempt: () => client.attempt(),
      blacklist: () => client.blacklist(),
      blacklistSince: (known) => client.blacklistSince(known),
      containers: () => client.containers(),
      completedContainers: (after) => client.completedContainers(after),
      release: (ids) => client.release(ids),
      async updateBlacklist(change, owner) {
        const race = beforePush;
        beforePush = undefined;
        await race?.();
        return client.updateBlacklist(change, owner);
      },
    };
    const rm = new ResourceManagerClient({ addresses: sim.url, timeoutMs: 2000 });
    engine = new SyncEngine({ store, rm, proxy, clock, logger: silentLogger, settings: TEST_SETTINGS, metrics: createMetrics() });
    await engine.start();
  });
  afterEach(async () => {
    await engine.stop();
    await sim.close();
    await store.close();
  });

  const h = (i: number): string => sim.cluster.nodes[i - 1].host;
  const reads = () => ({ all: sim.cluster.counters.blacklistReads, notModified: sim.cluster.counters.blacklistReadsNotModified });
  const owners = () => sidecarStatus(engine.view(), clock.now()).blacklist.owners ?? {};
  const block = async (host: string) => {
    await store.put(nodeItem(host));
    engine.kick('test block');
    await engine.idle();
  };
  const unblock = async (id: string) => {
    await store.remove(id);
    engine.kick('test unblock');
    await engine.idle();
  };
  /** One poll tick; idle() waits for its read and any pass it kicked. */
  const pollOnce = async () => {
    clock.advance(TEST_SETTINGS.pollIntervalMs);
    await engine.idle();
  };

  it('after our own push the next poll is a 304; a write by another owner after it is seen at the next poll', async () => {
    await block(h(1));
    assert.deepEqual(sim.cluster.clientBlacklistView(), [h(1)]);
    const r0 = reads();
    await pollOnce();
    const r1 = reads();
    assert.equal(r1.all - r0.all, 1);
    assert.equal(r1.notModified - r0.notModified, 1, 'our own push needed no full re-read');
    // Flink's own blocklist writes (owner "am"): the tag we hold is stale now.
    assert.equal((await http(sim.url, 'PUT', '/sim/v1/blacklist/owners/am', { hosts: [h(2)] })).status, 200);
    await pollOnce();
    const r2 = reads();
    assert.equal(r2.notModified, r1.notModified, 'a full read');
    assert.deepEqual(owners(), { am: [h(2)], blocklist: [h(1)] });
    // The sidecar blocks and unblocks h2 too: the host stays on YARN, for "am" still holds it.
    await block(h(2));
    await unblock(h(2));
    assert.deepEqual(sim.cluster.clientBlacklistView(), [h(1), h(2)]);
  });

  it('another owner writes between our read and our push: the push names a version we never read, and the next read is a full one', async () => {
    await block(h(1));
    beforePush = async () => {
      const r = await http(sim.url, 'POST', '/amrm/v1/blacklist', { owner: 'speculation', blacklistAdditions: [h(3)] });
      assert.equal(r.status, 200);
    };
    await block(h(4));
    assert.equal(beforePush, undefined, 'the race ran');
    assert.deepEqual(sim.cluster.ownersView(), { blocklist: [h(1), h(4)], speculation: [h(3)] });
    const r0 = reads();
    await pollOnce();
    const r1 = reads();
    assert.equal(r1.notModified, r0.notModified, 'the belief after the push was not taken as exact');
    assert.deepEqual(owners(), { blocklist: [h(1), h(4)], speculation: [h(3)] });
    // From here on nobody else writes: the poll is a 304 again.
    await pollOnce();
    assert.equal(reads().notModified - r1.notModified, 1);
  });
});
