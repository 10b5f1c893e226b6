/**
 * The reconcile rule and the memory rules, pure: no store, no YARN, no clock. Each rule that used
 * to be buried in the pass is an input or an output here.
 */
import { strict as assert } from 'node:assert';
import { BlockedItem, EVACUATE } from '../../src/model/item';
import { AppContainer } from '../../src/yarn/types';
import { NodeView } from '../../src/sync/desired';
import { Desired, Observed, Rules, reconcile, planEvacuations } from '../../src/sync/reconcile';
import { NeedsMemo } from '../../src/sync/read-policy';
import { Memory, afterNewAttempt, afterPush, afterRelease, emptyMemory, pruneReleased, rememberRunning, seedHighWater } from '../../src/sync/memory';
import { indexContainers } from '../../src/sync/watch-containers';
import { ownSet } from '../../src/sync/watch-blacklist';
import { APP, containerOf, nodeItem, tmItem } from './items';

const T0 = 1_652_313_600_000;
const RULES: Rules = { maxBlockedFraction: 1, evacuationTimeoutMs: 0, releaseBatchSize: 500, capNodeCountMemoryMs: 300_000, steps: { maxParallel: 0, checkpointTimeoutMs: 30_000, stepTimeoutMs: 300_000 } };
const hosts = (n: number): string[] => Array.from({ length: n }, (_, i) => `h${i + 1}`);
const running = (n: number): NodeView[] => hosts(n).map((host) => ({ host, state: 'RUNNING' }));
const tm = (n: number, host: string): AppContainer => ({ containerId: containerOf(1, n), nodeId: `${host}:8041`, host, state: 'RUNNING' });

function observed(o: Partial<Observed> = {}): Observed {
  return { actual: new Set(), othersHold: new Set(), schedulerOnly: [], nodes: running(10), containers: indexContainers([]), ...o };
}
function desired(items: Desired['items'], rules: Partial<Rules> = {}): Desired {
  return { items, applicationId: APP, rules: { ...RULES, ...rules } };
}

describe('sync/reconcile: what to push', () => {
  it('pushes desired − actual and actual − desired; nothing when equal', () => {
    const d = reconcile(observed({ actual: new Set(['h2', 'h9']) }), desired([nodeItem('h1'), nodeItem('h2')]), emptyMemory(), T0);
    assert.deepEqual(d.push, { additions: ['h1'], removals: ['h9'] });
    const same = reconcile(observed({ actual: new Set(['h1']) }), desired([nodeItem('h1')]), emptyMemory(), T0);
    assert.equal(same.push, undefined);
  });

  it('re-push on a new attempt: every desired host again, and what the old attempt had is removed unless desired', () => {
    const memory = afterNewAttempt(emptyMemory(), ['h1', 'h3']);
    const d = reconcile(observed({ actual: new Set(['h1']) }), desired([nodeItem('h1'), nodeItem('h2')]), memory, T0);
    assert.deepEqual(d.push, { additions: ['h1', 'h2'], removals: ['h3'] });
    // Once a push went through, the re-push is done.
    const after = afterPush(d.memory, { ok: true });
    assert.equal(after.repushAll, false);
    assert.deepEqual([...after.maybeOnYarn], []);
  });

  it('"maybe on YARN" after a failed push: its additions become removal candidates, never a reason to skip an addition', () => {
    const failed = afterPush(emptyMemory(), { ok: false, attempted: { additions: ['h4'], removals: [] } });
    assert.deepEqual([...failed.maybeOnYarn], ['h4']);
    // Unblocked while the answer was lost: h4 gets an explicit removal although the proxy does not list it.
    assert.deepEqual(reconcile(observed(), desired([]), failed, T0).push, { additions: [], removals: ['h4'] });
    // Still wanted: it is added (the failed push may not have reached the AM at all).
    assert.deepEqual(reconcile(observed(), desired([nodeItem('h4')]), failed, T0).push, { additions: ['h4'], removals: [] });
  });

  it("hosts only the RM's view lists get an explicit removal unless desired", () => {
    const d = reconcile(observed({ schedulerOnly: ['h5', 'h6'] }), desired([nodeItem('h6')]), emptyMemory(), T0);
    assert.deepEqual(d.push, { additions: ['h6'], removals: ['h5'] });
  });

  it('ownership: a host another owner holds is never removed, whatever this sidecar once believed about it', () => {
    let memory = afterNewAttempt(emptyMemory(), ['h1', 'h3']);
    memory = afterPush(memory, { ok: false, attempted: { additions: ['h4'], removals: [] } });
    const d = reconcile(observed({ actual: new Set(['h1']), othersHold: new Set(['h3', 'h4', 'h5']), schedulerOnly: ['h5'] }), desired([]), memory, T0);
    // h1 is this owner's own entry: removed from its own set (the proxy keeps it while others hold it).
    assert.deepEqual(d.push, { additions: [], removals: ['h1'] });
  });

  it("ownership across a new attempt: hosts another owner held before are not removed when only the RM's inherited list still has them", () => {
    const seenBefore = reconcile(observed({ actual: new Set(['h1']), othersHold: new Set(['h3']) }), desired([nodeItem('h1')]), emptyMemory(), T0);
    const memory = afterNewAttempt(seenBefore.memory, ['h1']);
    // The new AM's proxy lists nobody; the scheduler carried h1 and h3 over.
    const d = reconcile(observed({ schedulerOnly: ['h1', 'h3'] }), desired([]), memory, T0 + 1000);
    assert.deepEqual(d.push, { additions: [], removals: ['h1'] });
  });

  it("ownership: this owner's set is its own entries; a proxy without owners reports the union as ours", () => {
    assert.deepEqual(ownSet({ blacklist: ['a', 'b', 'c'], owners: { blocklist: ['a'], am: ['b', 'a'], x: ['c'] } }, 'blocklist'), { own: new Set(['a']), others: new Set(['b', 'a', 'c']) });
    assert.deepEqual(ownSet({ blacklist: ['b'], owners: { am: ['b'] } }, 'blocklist'), { own: new Set(), others: new Set(['b']) });
    assert.deepEqual(ownSet({ blacklist: ['a'], owners: {} }, 'blocklist'), { own: new Set(['a']), others: new Set() });
  });

  it('the next end of an item in scope is a deadline; other applications do not wake the engine', () => {
    const d = reconcile(observed(), desired([nodeItem('h1', { end: T0 + 5000 }), nodeItem('h2', { end: T0 + 1000, scope: 'application_1652313600000_0042' })]), emptyMemory(), T0);
    assert.deepEqual([...d.deadlines], [['expiry', T0 + 5000]]);
  });
});

describe("sync/reconcile: the safety cap's remembered denominator", () => {
  it('keeps the highest RUNNING count within the window; a lasting shrink applies once it has passed', () => {
    let hw: Memory['runningHighWater'];
    ({ highWater: hw } = rememberRunning(hw, 10, T0, 60_000));
    assert.equal(rememberRunning(hw, 4, T0 + 30_000, 60_000).floor, 10);
    assert.equal(rememberRunning(hw, 4, T0 + 60_001, 60_000).floor, 4);
    assert.equal(rememberRunning(hw, 12, T0 + 1, 60_000).floor, 12);
  });

  it("after a restart (empty memory) the floor starts from what YARN holds: a dip then lifts nothing; a lasting shrink still applies after the window", () => {
    const items = [1, 2, 3].map((k) => nodeItem(`h${k}`, { start: T0 + k }));
    // The RM re-registers its NodeManagers: 3 of 10 RUNNING (the blocked ones) when the restarted sidecar first looks.
    const dip = observed({ actual: new Set(['h1', 'h2', 'h3']), runningNodes: 3, nodes: [...running(3), ...hosts(10).slice(3).map((host): NodeView => ({ host, state: 'NEW' }))] });
    const first = reconcile(dip, desired(items, { maxBlockedFraction: 0.33 }), emptyMemory(), T0);
    assert.deepEqual(first.view.plan.deferred.map((i) => i.id), [], 'nothing deferred');
    assert.equal(first.push, undefined, 'no removal pushed');
    assert.deepEqual(first.memory.runningHighWater, { count: 10, at: T0 }, 'ceil(3 / 0.33)');
    // Still 3 RUNNING once the window has passed: now the cap of 3 nodes applies (0.33 × 3 rounds to 0: the minimum of one slot).
    const later = reconcile(dip, desired(items, { maxBlockedFraction: 0.33 }), first.memory, T0 + RULES.capNodeCountMemoryMs + 1);
    assert.deepEqual(later.push, { additions: [], removals: ['h2', 'h3'] });
    // Nothing of ours on YARN: nothing to seed (a first start is as before).
    assert.equal(seedHighWater(undefined, 0, 0.33, T0), undefined);
    assert.equal(seedHighWater(undefined, 3, 0, T0), undefined);
  });

  it('a dipping node list does not lift enforced blocks (the floor is an input and an output of the decision)', () => {
    const items = [1, 2, 3].map((k) => nodeItem(`h${k}`, { start: T0 + k }));
    const first = reconcile(observed(), desired(items, { maxBlockedFraction: 0.33 }), emptyMemory(), T0);
    assert.deepEqual(first.view.plan.blacklist, ['h1', 'h2', 'h3']);
    const dip = reconcile(observed({ nodes: running(4) }), desired(items, { maxBlockedFraction: 0.33 }), first.memory, T0 + 1000);
    assert.deepEqual(dip.view.plan.blacklist, ['h1', 'h2', 'h3']);
    const later = reconcile(observed({ nodes: running(4) }), desired(items, { maxBlockedFraction: 0.33 }), dip.memory, T0 + 400_000);
    assert.deepEqual(later.view.plan.blacklist, ['h1']);
    assert.deepEqual(
      later.events.filter((e) => e.kind === 'deferred').map((e) => e.id),
      ['h2', 'h3'],
    );
  });

  it('each deferral is an event once, and its end is an event once', () => {
    const items = [1, 2].map((k) => nodeItem(`h${k}`, { start: T0 + k }));
    const a = reconcile(observed({ nodes: running(2) }), desired(items, { maxBlockedFraction: 0.5 }), emptyMemory(), T0);
    assert.deepEqual(a.events, [{ kind: 'deferred', id: 'h2', capacity: 1, runningNodes: 2 }]);
    const b = reconcile(observed({ nodes: running(2) }), desired(items, { maxBlockedFraction: 0.5 }), a.memory, T0);
    assert.deepEqual(b.events, []);
    const c = reconcile(observed({ nodes: running(2) }), desired([items[1]], { maxBlockedFraction: 0.5 }), b.memory, T0);
    assert.deepEqual(c.events, [{ kind: 'undeferred', id: 'h2', enforced: true }]);
  });
});

describe('sync/reconcile: evacuations and releases', () => {
  const evac = (host: string, o: { timeout?: number } = {}) => nodeItem(host, { action: EVACUATE, evacuationTimeout: o.timeout ?? 0, start: T0 });

  it('phases and deadlines: WAIT_CONTAINER wakes the engine at its deadline, TIMEOUT releases, no containers is READY', () => {
    const containers = indexContainers([tm(2, 'h1'), tm(3, 'h2')]);
    const d = reconcile(observed({ containers }), desired([evac('h1', { timeout: 60 }), evac('h2'), evac('h3')]), emptyMemory(), T0 + 1000);
    const phase = (id: string) => d.view.evacuations?.statuses.get(id)?.phase;
    assert.deepEqual([phase('h1'), phase('h2'), phase('h3')], ['WAIT_CONTAINER', 'TIMEOUT', 'READY']);
    assert.equal(d.deadlines.get('evacuation:h1'), T0 + 61_000, 'started by this pass');
    assert.deepEqual(d.releases, { batch: [containerOf(1, 3)], waiting: [containerOf(1, 3)], kinds: new Map([[containerOf(1, 3), 'blind']]) }, 'without Flink: released at the deadline as YARN does');
    assert.deepEqual(
      d.events.filter((e) => e.kind === 'phase').map((e) => e.kind === 'phase' && [e.id, e.from, e.status.phase]),
      [
        ['h1', undefined, 'WAIT_CONTAINER'],
        ['h2', undefined, 'TIMEOUT'],
        ['h3', undefined, 'READY'],
      ],
    );
  });

  it('a task manager item releases its container only where it names it: elsewhere nothing is released and the status says where it runs', () => {
    const containers = indexContainers([tm(9, 'h3'), tm(4, 'h1')]);
    const wrong = tmItem('h1', containerOf(1, 9), { action: EVACUATE, evacuationTimeout: 0 });
    const right = tmItem('h1', containerOf(1, 4), { action: EVACUATE, evacuationTimeout: 0 });
    const d = reconcile(observed({ containers }), desired([wrong, right]), emptyMemory(), T0);
    assert.deepEqual(d.releases.batch, [containerOf(1, 4)]);
    assert.equal(d.view.evacuations?.statuses.get(wrong.id)?.runsOn, 'h3');
    assert.deepEqual(d.view.evacuations?.statuses.get(wrong.id)?.containers, []);
    assert.equal(d.view.evacuations?.statuses.get(right.id)?.runsOn, undefined);
  });

  it('an evacuation whose start is not stored starts now (recorded after the push); a deferred one has not started', () => {
    const fresh = nodeItem('h2', { action: EVACUATE, evacuationTimeout: 60, start: T0 - 600_000, evacuationSince: null });
    const d = reconcile(observed({ containers: indexContainers([tm(2, 'h2')]) }), desired([fresh]), emptyMemory(), T0);
    assert.deepEqual([...d.starts.keys()], ['h2']);
    assert.deepEqual(d.starts.get('h2'), { since: T0, created: fresh.created.at });
    assert.equal(d.view.evacuations?.statuses.get('h2')?.phase, 'WAIT_CONTAINER', 'created 10 min ago, but its grace period starts now');
    assert.equal(d.deadlines.get('evacuation:h2'), T0 + 60_000);
    const capped = reconcile(observed({ nodes: running(2), containers: indexContainers([tm(2, 'h2')]) }), desired([nodeItem('h1', { start: T0 - 700_000 }), fresh], { maxBlockedFraction: 0.5 }), emptyMemory(), T0);
    assert.equal(capped.starts.size, 0);
    assert.equal(capped.view.evacuations?.statuses.size, 0);
  });

  it('containers unknown (their read failed): no evacuation is decided and nothing released', () => {
    const d = reconcile(observed({ containers: undefined }), desired([evac('h1')]), emptyMemory(), T0);
    assert.equal(d.view.evacuations, undefined);
    assert.deepEqual(d.releases.batch, []);
    assert.deepEqual(d.push, { additions: ['h1'], removals: [] }, 'the blacklist does not wait for containers');
  });

  it('a deferred EVACUATE item does not evacuate', () => {
    const items = [nodeItem('h1', { start: T0 }), evac('h2')];
    const d = reconcile(observed({ nodes: running(2), containers: indexContainers([tm(2, 'h2')]) }), desired(items, { maxBlockedFraction: 0.5 }), emptyMemory(), T0);
    assert.equal(d.view.evacuations?.statuses.size, 0);
    assert.deepEqual(d.releases.batch, []);
  });

  it('release batching: one batch per pass, each container once across items, the rest waits', () => {
    const list = [2, 3, 4, 5, 6].map((n) => tm(n, 'h1'));
    const items = [evac('h1'), tmItem('h1', containerOf(1, 2), { action: EVACUATE, evacuationTimeout: 0 })];
    const d = reconcile(observed({ containers: indexContainers(list) }), desired(items, { releaseBatchSize: 2 }), emptyMemory(), T0);
    assert.deepEqual(d.releases.batch, [containerOf(1, 2), containerOf(1, 3)]);
    assert.equal(d.releases.waiting.length, 5, 'container 2 is wanted by both items and counted once');
    const plans = planEvacuations(items, new Map(), indexContainers(list), new Map(), 0, { now: T0, mono: T0 });
    assert.deepEqual(plans.get(items[1].id)?.containers, [containerOf(1, 2)]);
  });

  it('release once: a released (or unknown) id is never asked again, and is forgotten once gone', () => {
    const containers = indexContainers([tm(2, 'h1'), tm(3, 'h1')]);
    let memory = afterRelease(emptyMemory(), [containerOf(1, 2)], containers);
    assert.equal(memory.released.get(containerOf(1, 2)), 'h1');
    const d = reconcile(observed({ containers }), desired([evac('h1')]), memory, T0);
    assert.deepEqual(d.releases.batch, [containerOf(1, 3)]);
    assert.deepEqual(d.view.evacuations?.statuses.get('h1')?.released, [containerOf(1, 2), containerOf(1, 3)], 'as decided: this pass releases 3');
    // Still listed → kept; gone from the list and no evacuation reports it → forgotten.
    memory = pruneReleased(memory, containers.byId, new Set());
    assert.equal(memory.released.size, 1);
    memory = pruneReleased(memory, new Map(), new Set());
    assert.equal(memory.released.size, 0);
  });

  it('any EVACUATE item in scope makes the pass demand this pass\'s containers', () => {
    const anyEvacuation = (items: BlockedItem[], app: string, now: number) => new NeedsMemo().get(items, app, now).evacuating;
    assert.equal(anyEvacuation([nodeItem('h1')], APP, T0), false);
    assert.equal(anyEvacuation([evac('h1')], APP, T0), true);
    assert.equal(anyEvacuation([nodeItem('h1', { action: EVACUATE, end: T0 })], APP, T0), false, 'expired');
    assert.equal(anyEvacuation([nodeItem('h1', { action: EVACUATE, scope: 'application_1652313600000_0042' })], APP, T0), false, 'other app');
  });
});
