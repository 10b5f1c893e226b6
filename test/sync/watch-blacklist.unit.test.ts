/**
 * The blacklist watcher's use of a versioned proxy (src/sync/watch-blacklist.ts): a read sends the
 * tag of the belief it holds and keeps that belief on "unchanged"; after our own push the belief is
 * kept under the new tag only when the proxy applied the change to the very version the belief was
 * read from, and only when the change adds up to what the push says the set now is; in every other
 * case the next read is a full one. Over the simulator's cluster in memory (no sockets).
 */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { createMetrics } from '../../src/metrics/metrics';
import { SimCluster } from '../../src/sim/cluster';
import { inProcessYarn } from '../../src/sim/in-process';
import { BlacklistWatcher, appliedIs } from '../../src/sync/watch-blacklist';
import { AmrmProxy, BlacklistChange, BlacklistVersion } from '../../src/yarn/types';

const T0 = 1_652_313_600_000;

function setup(o: { versioned?: boolean } = {}) {
  const cluster = new SimCluster({ nodes: 8, containers: 0, slotsPerNode: 4, seed: 3, clock: new FakeClock(T0) });
  const yarn = inProcessYarn(cluster);
  const asked: (BlacklistVersion | undefined)[] = [];
  const full: number[] = [];
  const inner = yarn.proxy;
  const proxy: AmrmProxy = {
    ...inner,
    async blacklistSince(known) {
      asked.push(known);
      const r = await inner.blacklistSince!(known);
      if (!r.unchanged) full.push(asked.length);
      return r;
    },
    // An unversioned proxy acknowledges a push with nothing.
    updateBlacklist: async (change, owner) => {
      const w = await inner.updateBlacklist(change, owner);
      return o.versioned === false ? undefined : w;
    },
  };
  const watcher = new BlacklistWatcher({ proxy, rm: yarn.rm, logger: silentLogger, metrics: createMetrics(), owner: 'blocklist' });
  const h = (i: number) => cluster.nodes[i - 1].host;
  /** One pass's read, then our push of `change` (the set becoming `hosts`), as the controller does it. */
  const push = async (change: BlacklistChange, hosts: string[]) => {
    const write = await proxy.updateBlacklist(change, 'blocklist');
    watcher.wrote(hosts, T0, { change, write });
  };
  const refresh = async () => assert.ok((await watcher.refresh(T0, undefined, undefined)).ok);
  return { cluster, watcher, asked, full, h, push, refresh, lastAsked: () => asked.at(-1) };
}

describe('sync/watch-blacklist: reading a versioned proxy', () => {
  it('a read sends the tag of the belief; "unchanged" keeps the very same belief; a poll sees no drift', async () => {
    const s = setup();
    s.cluster.updateBlacklist([s.h(1)], [], 'am');
    await s.refresh();
    assert.equal(s.lastAsked(), undefined, 'the first read is a full one');
    const belief = s.watcher.cache.value;
    assert.deepEqual([...belief!.othersHold], [s.h(1)]);
    await s.refresh();
    assert.deepEqual(s.lastAsked(), { kind: 'etag', etag: s.cluster.blacklistEtag() });
    assert.equal(s.watcher.cache.value, belief, 'nothing parsed, no sets rebuilt');
    assert.equal(await s.watcher.drifted(T0), false);
    assert.deepEqual(s.full, [1]);
  });

  it('our push applied to the version we read: the belief is exact under the new tag, and the next read is a 304', async () => {
    const s = setup();
    s.cluster.updateBlacklist([s.h(1)], [], 'am');
    await s.refresh();
    await s.push({ additions: [s.h(2), s.h(3)], removals: [] }, [s.h(2), s.h(3)]);
    await s.refresh();
    assert.deepEqual(s.lastAsked(), { kind: 'etag', etag: s.cluster.blacklistEtag() }, 'asked with the tag our push made');
    assert.deepEqual(s.full, [1], 'no full read after our own push');
    const v = s.watcher.cache.value!;
    assert.deepEqual([...v.actual].sort(), [s.h(2), s.h(3)]);
    assert.deepEqual([...v.othersHold], [s.h(1)]);
    // A second push on top of the first, still nobody else: still exact.
    await s.push({ additions: [], removals: [s.h(3)] }, [s.h(2)]);
    assert.equal(await s.watcher.drifted(T0), false);
    assert.deepEqual(s.full, [1]);
  });

  it('another owner wrote between our read and our push: the next read is a full one and sees it', async () => {
    const s = setup();
    await s.refresh();
    s.cluster.updateBlacklist([s.h(5)], [], 'am');
    await s.push({ additions: [s.h(2)], removals: [] }, [s.h(2)]);
    await s.refresh();
    assert.equal(s.lastAsked(), undefined, 'the belief was not filed under any tag');
    assert.deepEqual([...s.watcher.cache.value!.othersHold], [s.h(5)]);
    assert.deepEqual(s.full, [1, 2]);
  });

  it('another owner wrote after our push: the tag we hold is stale, the read is full and sees it', async () => {
    const s = setup();
    await s.refresh();
    await s.push({ additions: [s.h(2)], removals: [] }, [s.h(2)]);
    s.cluster.updateBlacklist([s.h(6)], [], 'speculation');
    assert.equal(await s.watcher.drifted(T0), false, 'our own set did not move');
    assert.deepEqual([...s.watcher.cache.value!.othersHold], [s.h(6)], 'no stale belief about the others');
    assert.deepEqual(s.full, [1, 2]);
  });

  it('someone rewrote our own set after our push: the poll sees the drift', async () => {
    const s = setup();
    await s.refresh();
    await s.push({ additions: [s.h(2)], removals: [] }, [s.h(2)]);
    s.cluster.updateBlacklist([], [s.h(2)], 'blocklist');
    assert.equal(await s.watcher.drifted(T0), true);
    assert.deepEqual([...s.watcher.cache.value!.actual], []);
  });

  it('no versions in the push answer, a change that does not add up to the set, an invalidation: the next read is full', async () => {
    const unversioned = setup({ versioned: false });
    await unversioned.refresh();
    await unversioned.push({ additions: [unversioned.h(2)], removals: [] }, [unversioned.h(2)]);
    await unversioned.refresh();
    assert.equal(unversioned.lastAsked(), undefined);

    const s = setup();
    await s.refresh();
    // The push says the set is now h2 and h4, but only h2 was sent: the belief is not the proxy's state.
    await s.push({ additions: [s.h(2)], removals: [] }, [s.h(2), s.h(4)]);
    await s.refresh();
    assert.equal(s.lastAsked(), undefined);
    assert.deepEqual([...s.watcher.cache.value!.actual], [s.h(2)], 'what the proxy holds, read in full');

    s.watcher.invalidate();
    await s.refresh();
    assert.equal(s.lastAsked(), undefined, 'an invalidated belief is read in full');
  });

  it('a new attempt (the RM view is due) reads in full, whatever tag is held', async () => {
    const s = setup();
    await s.watcher.refresh(T0, s.cluster.applicationId, s.cluster.currentAttempt.id);
    await s.watcher.refresh(T0, s.cluster.applicationId, s.cluster.currentAttempt.id);
    assert.ok(s.lastAsked() !== undefined);
    s.cluster.newAttempt('empty');
    await s.watcher.refresh(T0, s.cluster.applicationId, s.cluster.currentAttempt.id);
    assert.equal(s.lastAsked(), undefined);
  });

  it('appliedIs: additions then removals (removal wins), exactly the set after', () => {
    const before = new Set(['a', 'b']);
    assert.ok(appliedIs(before, { additions: ['c'], removals: ['a'] }, new Set(['b', 'c'])));
    assert.ok(appliedIs(before, { additions: ['c', 'c'], removals: ['c'] }, new Set(['a', 'b'])));
    assert.ok(appliedIs(before, { additions: ['a'], removals: ['x'] }, new Set(['a', 'b'])));
    assert.ok(!appliedIs(before, { additions: ['c'], removals: [] }, new Set(['a', 'b'])));
    assert.ok(!appliedIs(before, { additions: [], removals: [] }, new Set(['a', 'b', 'z'])));
    assert.ok(!appliedIs(before, { additions: [], removals: ['a'] }, new Set(['a', 'b'])));
  });
});
