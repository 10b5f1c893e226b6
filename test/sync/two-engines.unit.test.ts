/**
 * Two engines in one process do not see each other's state (#33): what the decision step
 * remembers (the last plan, diff and age order) is a value each owner passes in and gets back, not
 * state of a module. Interleaved decisions of two jobs give each the answers it would get alone,
 * and each one's memory speaks of its own snapshot only.
 */
import { strict as assert } from 'node:assert';
import { BlockedItem } from '../../src/model/item';
import { NodeView } from '../../src/sync/desired';
import { Memory, emptyMemory } from '../../src/sync/memory';
import { Desired, Observed, Rules, reconcile } from '../../src/sync/reconcile';
import { APP, nodeItem } from './items';
import { closeRigs, rig } from './rig';

afterEach(closeRigs);

const T0 = 1_652_313_600_000;
const RULES: Rules = { maxBlockedFraction: 1, evacuationTimeoutMs: 0, releaseBatchSize: 500, capNodeCountMemoryMs: 300_000, steps: { maxParallel: 0, checkpointTimeoutMs: 30_000, stepTimeoutMs: 300_000 } };
const nodes: NodeView[] = Array.from({ length: 40 }, (_, i) => ({ host: `h${i}`, state: 'RUNNING' }));
const observed = (actual: ReadonlySet<string>): Observed => ({ actual, othersHold: new Set(), schedulerOnly: [], nodes, containers: undefined });
const desired = (items: readonly BlockedItem[]): Desired => ({ items, applicationId: APP, rules: RULES });

/** A snapshot as a store hands it out: sorted by id, the same objects until they change. */
function snapshotOf(hosts: number[], start: number): BlockedItem[] {
  return hosts.map((h) => nodeItem(`h${h}`, { start: start + h })).sort((a, b) => (a.id < b.id ? -1 : 1));
}

describe('two engines in one process', () => {
  it("interleaved decisions of two jobs: each gets the answer it would get alone, and each memory holds its own snapshot's plan and age order", () => {
    let a: Memory = emptyMemory();
    let b: Memory = emptyMemory();
    let aItems = snapshotOf([1, 2, 3], T0);
    let bItems = snapshotOf([20, 21], T0);
    let aActual: ReadonlySet<string> = new Set();
    let bActual: ReadonlySet<string> = new Set();
    for (let step = 0; step < 12; step++) {
      // Each job's snapshot grows by one item in one step out of two (the same objects otherwise).
      if (step % 2 === 0) aItems = [...aItems, ...snapshotOf([4 + step], T0)].sort((x, y) => (x.id < y.id ? -1 : 1));
      else bItems = [...bItems, ...snapshotOf([22 + step], T0)].sort((x, y) => (x.id < y.id ? -1 : 1));
      const now = T0 + 1000 * step;
      const da = reconcile(observed(aActual), desired(aItems), a, now);
      const db = reconcile(observed(bActual), desired(bItems), b, now);
      const aloneA = reconcile(observed(aActual), desired(aItems), emptyMemory(), now);
      const aloneB = reconcile(observed(bActual), desired(bItems), emptyMemory(), now);
      assert.deepEqual(da.view.plan.blacklist, aloneA.view.plan.blacklist, `job A, step ${step}`);
      assert.deepEqual(db.view.plan.blacklist, aloneB.view.plan.blacklist, `job B, step ${step}`);
      assert.deepEqual(da.push, aloneA.push);
      assert.deepEqual(db.push, aloneB.push);
      a = da.memory;
      b = db.memory;
      assert.equal(a.decision.ageOrder?.items, aItems, "A's age order is of A's snapshot");
      assert.equal(b.decision.ageOrder?.items, bItems, "B's age order is of B's snapshot");
      assert.equal(a.decision.plan?.plan, da.view.plan);
      assert.equal(b.decision.plan?.plan, db.view.plan);
      aActual = da.view.plan.blacklistSet;
      bActual = db.view.plan.blacklistSet;
    }
    // The same snapshot again: each gets back its own remembered plan, never the other's.
    const now = T0 + 20_000;
    assert.equal(reconcile(observed(aActual), desired(aItems), a, now).view.plan.blacklistSet, aActual);
    assert.equal(reconcile(observed(bActual), desired(bItems), b, now).view.plan.blacklistSet, bActual);
  });

  it('two sync engines side by side, their blocks written in turns, each pushes exactly its own job\'s', async () => {
    const one = await rig({ nodes: 20 });
    const two = await rig({ nodes: 20 });
    for (let i = 1; i <= 8; i++) {
      await one.block(nodeItem(one.host(i)));
      await two.block(nodeItem(two.host(21 - i)));
      await one.step(100);
      await two.step(100);
    }
    await one.unblock(one.host(3));
    await two.unblock(two.host(18));
    await one.step(1000);
    await two.step(1000);
    assert.deepEqual(one.blacklist(), [1, 2, 4, 5, 6, 7, 8].map((i) => one.host(i)).sort());
    assert.deepEqual(two.blacklist(), [20, 19, 17, 16, 15, 14, 13].map((i) => two.host(i)).sort());
    assert.equal(one.status().blacklist.desired.length, 7);
    assert.equal(two.status().blacklist.desired.length, 7);
  });
});
