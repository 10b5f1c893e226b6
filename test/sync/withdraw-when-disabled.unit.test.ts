/** Switched off: the sidecar's own owner set leaves YARN's blacklist, other owners' entries stay. */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { SimCluster } from '../../src/sim/cluster';
import { inProcessYarn } from '../../src/sim/in-process';
import { Backoff } from '../../src/sync/backoff';
import { Withdrawal, withdrawOwnSet } from '../../src/sync/withdraw-when-disabled';

describe('sync/withdraw: enabled=false withdraws this sidecar\'s entries', () => {
  it("removes exactly this owner's set, retried until the proxy answers; another owner's entries stay", async () => {
    const clock = new FakeClock();
    const cluster = new SimCluster({ nodes: 4, containers: 0, clock });
    const [h1, h2, h3] = cluster.nodes.map((n) => n.host);
    cluster.setOwnerBlacklist('blocklist', [h1, h2]);
    cluster.setOwnerBlacklist('am', [h2, h3]);
    const yarn = inProcessYarn(cluster);
    yarn.faults.set('amrm', { outage: 'unavailable' });
    const w = new Withdrawal({ proxy: yarn.proxy, owner: 'blocklist', clock, logger: silentLogger, backoff: new Backoff({ initialMs: 200, maxMs: 1000 }) });
    w.start();
    await w.idle();
    assert.equal(w.last?.result, 'failed');
    yarn.faults.clear('amrm');
    clock.advance(200);
    await w.idle();
    assert.deepEqual(w.last, { result: 'withdrawn', hosts: [h1, h2] });
    assert.deepEqual(cluster.ownersView(), { am: [h2, h3] });
    assert.deepEqual(cluster.clientBlacklistView(), [h2, h3]);
    assert.deepEqual(await withdrawOwnSet(yarn.proxy, 'blocklist'), { result: 'nothing-to-withdraw' });
    await w.stop();
  });
});
