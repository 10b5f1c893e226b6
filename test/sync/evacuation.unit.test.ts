import { strict as assert } from 'node:assert';
import { EvacuationInput, EvacuationStatus, evacuationStatus, evacuationTimeoutMs, graceOver, isAmContainer, isLive, planEvacuation, remainingSeconds, stepTargets } from '../../src/sync/evacuation';
import { decideSteps, emptyStepMemory } from '../../src/sync/evacuation-steps';
import { EVACUATE, MARK_BLOCKED } from '../../src/model/item';
import { AppContainer } from '../../src/yarn/types';
import { nodeItem, tmItem, containerOf } from './items';

const T0 = 1_652_313_600_000;

/** One item alone, without Flink (as YARN's graceful decommission): its status, what goes now, when it wakes. */
function evaluateEvacuation(input: EvacuationInput): { status: EvacuationStatus; toRelease: string[]; wakeAt?: number } {
  const plan = planEvacuation(input);
  const steps = decideSteps(stepTargets([plan], input.released), { kind: 'off', why: 'no Flink in this test' }, emptyStepMemory(), { maxParallel: 0, checkpointTimeoutMs: 30_000, stepTimeoutMs: 300_000 }, 0);
  const toRelease = steps.release.map((r) => r.containerId);
  // The status as a pass shows it before its release is made (the controller shows it again after).
  const status = evacuationStatus(plan, { steps, flink: { kind: 'off', why: 'no Flink in this test' }, released: input.released, kinds: new Map(), now: input.now });
  return { status: toRelease.length > 0 ? { ...status, phase: 'TIMEOUT' } : status, toRelease, ...(plan.wakeAt !== undefined ? { wakeAt: plan.wakeAt } : {}) };
}
const c = (n: number, host = 'node1', state = 'RUNNING'): AppContainer => ({ containerId: containerOf(1, n), nodeId: `${host}:8041`, host, state });

describe('sync/evacuation: phases (graceful decommission rules, C5)', () => {
  it('WAIT_CONTAINER while waitTime < timeout; waitTime == timeout is the end of the grace period', () => {
    assert.equal(graceOver(99_999, 100_000), false);
    assert.equal(graceOver(100_000, 100_000), true);
    assert.equal(graceOver(500_000, 100_000), true);
  });
  it('negative timeout never times out', () => {
    assert.equal(graceOver(10 * 365 * 86_400_000, -1), false);
    assert.equal(remainingSeconds('WAIT_CONTAINER', undefined, T0 + 5), -1);
  });
  it('timeout 0: over at once; READY when nothing is left, whatever the timeout', () => {
    assert.equal(graceOver(0, 0), true);
    const item = nodeItem('node1', { action: EVACUATE, evacuationTimeout: 100 });
    assert.equal(evaluateEvacuation({ item, since: T0, containersOnNode: [], released: new Map(), defaultTimeoutMs: 0, now: T0 + 1 }).status.phase, 'READY');
    assert.equal(evaluateEvacuation({ item: { ...item, evacuationTimeout: -1 }, since: T0, containersOnNode: [], released: new Map(), defaultTimeoutMs: 0, now: T0 + 1 }).status.phase, 'READY');
  });
  it('remaining seconds = max(0, floor(left/1000)); 0 when READY', () => {
    assert.equal(remainingSeconds('WAIT_CONTAINER', T0 + 100_000, T0 + 40_500), 59);
    assert.equal(remainingSeconds('TIMEOUT', T0 + 100_000, T0 + 200_000), 0);
    assert.equal(remainingSeconds('READY', undefined, T0), 0);
  });
  it('the grace period is the elapsed time given, not the wall clock: a start 2 h "ago" after a clock step still waits', () => {
    const it30 = nodeItem('node1', { action: EVACUATE, evacuationTimeout: 1800 });
    const d = evaluateEvacuation({ item: it30, since: T0, elapsedMs: 3_000, containersOnNode: [c(3)], released: new Map(), defaultTimeoutMs: 0, now: T0 + 2 * 3_600_000 });
    assert.equal(d.status.phase, 'WAIT_CONTAINER');
    assert.deepEqual(d.toRelease, []);
    assert.equal(d.status.deadline, T0 + 2 * 3_600_000 + 1_797_000, 'the deadline as the (stepped) wall clock now reads it');
    assert.equal(d.status.remainingSeconds, 1797);
  });
  it('timeout priority: the item (seconds) over the default (ms); any negative is forever', () => {
    assert.equal(evacuationTimeoutMs(nodeItem('n', { action: EVACUATE, evacuationTimeout: 30 }), 5000), 30_000);
    assert.equal(evacuationTimeoutMs(nodeItem('n', { action: EVACUATE }), 5000), 5000);
    assert.equal(evacuationTimeoutMs(nodeItem('n', { action: EVACUATE, evacuationTimeout: -7 }), 5000), -1);
    assert.equal(evacuationTimeoutMs(nodeItem('n', { action: EVACUATE }), -20), -1);
    assert.equal(evacuationTimeoutMs(nodeItem('n', { action: EVACUATE, evacuationTimeout: 0 }), 60_000), 0);
  });
  it("the AM's container is never a target: known by the attempt's amContainerId, not by its number", () => {
    const it = nodeItem('node1', { action: EVACUATE, evacuationTimeout: 0 });
    const am = containerOf(1, 1);
    // After a work-preserving RM restart a worker of the same attempt is numbered 1 again, under a new epoch.
    const worker1 = { ...c(1), containerId: 'container_e02_1652313600000_0001_01_000001' };
    const d = evaluateEvacuation({ item: it, since: T0, containersOnNode: [c(1), worker1, c(2)], released: new Map(), defaultTimeoutMs: 0, now: T0, amContainerId: am });
    assert.deepEqual(d.toRelease, [worker1.containerId, containerOf(1, 2)].sort());
    assert.ok(isAmContainer(am, am));
    assert.ok(!isAmContainer(worker1.containerId, am));
    assert.ok(isAmContainer(containerOf(1, 7), containerOf(1, 7)), 'whatever its number');
  });
  it('with no one naming the AM container (an old proxy, RM attempts unread) container 1 of its attempt is taken for it', () => {
    const it = nodeItem('node1', { action: EVACUATE, evacuationTimeout: 0 });
    const d = evaluateEvacuation({ item: it, since: T0, containersOnNode: [c(1), c(2)], released: new Map(), defaultTimeoutMs: 0, now: T0 });
    assert.deepEqual(d.toRelease, [containerOf(1, 2)]);
    assert.ok(isAmContainer(containerOf(2, 1), undefined));
    assert.ok(!isAmContainer(containerOf(1, 2), undefined));
  });
  it('finished and released containers are not live', () => {
    assert.ok(isLive(c(1)));
    assert.ok(isLive(c(1, 'node1', 'NEW')));
    for (const s of ['COMPLETE', 'RELEASING', 'released', 'KILLED']) assert.ok(!isLive(c(1, 'node1', s)), s);
  });
});

describe('sync/evacuation: decisions', () => {
  const base = { released: new Map<string, string>(), defaultTimeoutMs: 0, since: T0 };

  it('a changed timeout does not reset the start: since 0, 100 s → 50 s at t=60 s is TIMEOUT at once', () => {
    const before = nodeItem('node1', { action: EVACUATE, evacuationTimeout: 100, start: T0 });
    const d1 = evaluateEvacuation({ ...base, item: before, containersOnNode: [c(3)], now: T0 + 60_000 });
    assert.equal(d1.status.phase, 'WAIT_CONTAINER');
    assert.equal(d1.wakeAt, T0 + 100_000);
    const after = { ...before, evacuationTimeout: 50 };
    const d2 = evaluateEvacuation({ ...base, item: after, containersOnNode: [c(3)], now: T0 + 60_000 });
    assert.equal(d2.status.phase, 'TIMEOUT');
    assert.equal(d2.status.since, T0);
    assert.deepEqual(d2.toRelease, [containerOf(1, 3)]);
  });

  it("the deadline counts from this job's start, not from the item's start (an MB→EVAC upgrade, or a block the cap held back)", () => {
    const it = nodeItem('node1', { action: EVACUATE, evacuationTimeout: 10, start: T0 });
    const d = evaluateEvacuation({ ...base, item: it, since: T0 + 50_000, containersOnNode: [c(3)], now: T0 + 55_000 });
    assert.equal(d.status.phase, 'WAIT_CONTAINER');
    assert.equal(d.status.deadline, T0 + 60_000);
    assert.equal(d.status.remainingSeconds, 5);
  });

  it('releases each container once: already-released ones are not released again', () => {
    const it = nodeItem('node1', { action: EVACUATE, evacuationTimeout: 0 });
    const released = new Map([[containerOf(1, 3), 'node1']]);
    const d = evaluateEvacuation({ item: it, since: T0, containersOnNode: [c(3), c(2)], released, defaultTimeoutMs: 0, now: T0 });
    assert.deepEqual(d.toRelease, [containerOf(1, 2)]);
    assert.deepEqual(d.status.released, [containerOf(1, 3)]);
  });

  it('a task manager item targets only its own container', () => {
    const it = tmItem('node1', containerOf(1, 2), { action: EVACUATE, evacuationTimeout: 0 });
    const d = evaluateEvacuation({ ...base, item: it, containersOnNode: [c(2)], now: T0 });
    assert.deepEqual(d.toRelease, [containerOf(1, 2)]);
    const none = evaluateEvacuation({ ...base, item: it, containersOnNode: [], now: T0 });
    assert.equal(none.status.phase, 'READY');
  });

  it('a forever-waiting item has no deadline and releases nothing', () => {
    const it = nodeItem('node1', { action: EVACUATE, evacuationTimeout: -1 });
    const d = evaluateEvacuation({ ...base, item: it, containersOnNode: [c(3)], now: T0 + 1e12 });
    assert.equal(d.status.phase, 'WAIT_CONTAINER');
    assert.equal(d.status.deadline, undefined);
    assert.equal(d.wakeAt, undefined);
    assert.deepEqual(d.toRelease, []);
    assert.equal(d.status.timeoutSeconds, -1);
  });

  it('MARK_BLOCKED items are not evacuations (the reconciler never evaluates them)', () => {
    assert.equal(nodeItem('n', { action: MARK_BLOCKED }).evacuationSince, undefined);
  });
});
