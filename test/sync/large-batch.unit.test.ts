/**
 * The sync engine's pass over the largest batch the API takes (10,000 items, #31.7), by what it
 * does rather than how long it takes: how many log lines it writes and how much it walks. The
 * time itself is a benchmark (bench `listing`, docs/benchmarks.md "The largest batch").
 */
import { strict as assert } from 'node:assert';
import { EVACUATE } from '../../src/model/item';
import { EACH_LINE_UP_TO, LISTED_IDS, eventLines, statusLines } from '../../src/sync/event-lines';
import { EvacuationStatus } from '../../src/sync/evacuation';
import { SyncEvent, planEvacuations, reconcile, reconcileInSteps } from '../../src/sync/reconcile';
import { STEP_ITEMS } from '../../src/sync/steps';
import { decodeStarts, encodeStarts } from '../../src/sync/evacuation-starts';
import { indexContainers } from '../../src/sync/watch-containers';
import { emptyMemory } from '../../src/sync/memory';
import { nodeItem } from './fakes';
import { T0, captureLogger, closeRigs, rig } from './rig';

const BATCH = 10_000;
const host = (i: number): string => `batch-${String(i).padStart(6, '0')}.example`;

describe('sync: the pass over a batch of 10,000 evacuations (#31.7)', () => {
  afterEach(closeRigs);

  it('logs one summary line for 10,000 phase changes at once, naming the first items and counting the rest', async () => {
    const lines: string[] = [];
    const r = await rig({ logger: captureLogger(lines), settings: { evacuationTimeoutMs: 600_000 } });
    for (let i = 0; i < BATCH; i++) await r.store.put(nodeItem(host(i), { action: EVACUATE, start: T0 }));
    // Turns of the event loop while the pass runs: the fake YARN answers at once, so without the
    // steps the pass would give up hardly any (steps.ts: one per STEP_ITEMS items of each loop).
    let turns = 0;
    let counting = true;
    const tick = (): void => {
      turns++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    r.engine.kick('test batch');
    await r.engine.idle();
    counting = false;
    assert.ok(turns >= (4 * BATCH) / STEP_ITEMS, `${turns} turns of the event loop during the pass`);
    assert.equal(r.blacklist().length, BATCH, 'the whole batch is on the blacklist');
    const evacuation = lines.filter((l) => /evacuation/.test(l));
    assert.ok(evacuation.length <= 2, `${evacuation.length} evacuation lines, e.g. ${evacuation.slice(0, 3).join(' | ')}`);
    const summary = evacuation.find((l) => l.includes(`${BATCH} evacuations start -> READY`));
    assert.ok(summary, `a summary line: ${evacuation[0]}`);
    assert.ok(summary.includes(`${host(0)}, ${host(1)}`), 'it names the first items');
    assert.ok(summary.endsWith(`and ${(BATCH - LISTED_IDS).toLocaleString('en')} more`), summary.slice(-80));
    assert.ok(lines.length < 20, `${lines.length} lines in all`);
  });

  it('a few phase changes keep a line each (with containers, timeout and start)', () => {
    const st = (id: string): EvacuationStatus => ({ itemId: id, node: id, action: EVACUATE, phase: 'WAIT_CONTAINER', since: T0, timeoutSeconds: 60, remainingSeconds: 60, containers: ['c1'], released: [] });
    const events: SyncEvent[] = Array.from({ length: EACH_LINE_UP_TO }, (_, i) => ({ kind: 'phase', id: host(i), from: undefined, status: st(host(i)) }));
    const out = eventLines(events, 1);
    assert.equal(out.length, EACH_LINE_UP_TO);
    assert.equal(out[0].message, `evacuation ${host(0)}: start -> WAIT_CONTAINER, 1 container(s) left, timeout 60s, since ${new Date(T0).toISOString()}`);
    // One more of the same change: one line; another change beside it keeps its own line.
    const more = eventLines([...events, { kind: 'phase', id: 'x', from: undefined, status: st('x') }, { kind: 'phase', id: 'y', from: 'WAIT_CONTAINER', status: { ...st('y'), phase: 'TIMEOUT' } }], 1);
    assert.deepEqual(
      more.map((l) => l.message.slice(0, 60)),
      [`evacuation: 11 evacuations start -> WAIT_CONTAINER: ${host(0)}, ${host(1)}`.slice(0, 60), `evacuation y: WAIT_CONTAINER -> TIMEOUT, 1 container(s) left,`.slice(0, 60)],
    );
  });

  it('the safety cap deferring (and letting go of) 10,000 items is one line each way', () => {
    const deferred: SyncEvent[] = Array.from({ length: BATCH }, (_, i) => ({ kind: 'deferred', id: host(i), capacity: 33, runningNodes: 100 }));
    const lifted: SyncEvent[] = Array.from({ length: BATCH }, (_, i) => ({ kind: 'undeferred', id: host(i), enforced: i % 2 === 0 }));
    const out = eventLines([...deferred, ...lifted], 0.33);
    assert.equal(out.length, 2);
    assert.equal(out[0].level, 'warn');
    assert.match(out[0].message, /^safety cap: 10000 items are deferred \(not blacklisted\): batch-000000\.example, .* and 9,980 more; 33 of 100 RUNNING nodes are already blocked \(max-blocked-fraction 0\.33\)$/);
    assert.match(out[1].message, /^safety cap: 5000 items are no longer deferred and go on the blacklist: batch-000000\.example, batch-000002\.example, .* and 4,980 more$/);
  });

  it('the periodic status log gives the first evacuations a line each and counts the rest by phase', () => {
    const st = (i: number): EvacuationStatus => ({ itemId: host(i), node: host(i), action: EVACUATE, phase: i % 4 === 0 ? 'RELEASING' : 'WAIT_CONTAINER', since: T0, timeoutSeconds: 600, remainingSeconds: 540, containers: ['c'], released: [] });
    const out = statusLines(Array.from({ length: BATCH }, (_, i) => st(i)), T0 + 60_000);
    assert.equal(out.length, 21);
    assert.match(out[0], /^evacuating batch-000000\.example +60s containers: 1 +RELEASING timeout:540s left released:0$/);
    assert.equal(out[20], 'evacuating: 9,980 more in progress (WAIT_CONTAINER 7,485, RELEASING 2,495); each one\'s state is in GET /blocklist');
    assert.equal(statusLines([st(1)], T0).length, 1);
  });

  it('the decision in steps is the decision: the same result, handed back every STEP_ITEMS items; the starts record round-trips', () => {
    const items = Array.from({ length: 2_000 }, (_, i) => nodeItem(host(i), { action: EVACUATE, start: T0 }));
    const rules = { maxBlockedFraction: 1, evacuationTimeoutMs: 600_000, releaseBatchSize: 100, capNodeCountMemoryMs: 60_000, steps: { maxParallel: 0, checkpointTimeoutMs: 0, stepTimeoutMs: 60_000 } };
    const observed = { actual: new Set<string>(), othersHold: new Set<string>(), schedulerOnly: [], nodes: [], containers: indexContainers([]) };
    const desired = { items, applicationId: 'application_1652313600000_0001', rules };
    const steps = reconcileInSteps(observed, desired, emptyMemory(), T0, 0);
    let handBacks = 0;
    let r = steps.next();
    for (; !r.done; r = steps.next()) handBacks++;
    assert.ok(handBacks >= (4 * items.length) / STEP_ITEMS, `${handBacks} hand-backs`);
    const whole = reconcile(observed, desired, emptyMemory(), T0, 0);
    assert.deepEqual(r.value.view.evacuations?.statuses, whole.view.evacuations?.statuses);
    assert.deepEqual(r.value.starts, whole.starts);
    assert.deepEqual(r.value.deadlines, new Map([['evacuation:' + host(0), T0 + 600_000]]), 'one deadline for the instant they share');
    const text = encodeStarts(whole.starts);
    assert.deepEqual(decodeStarts(text).starts, whole.starts);
    const o: Record<string, [string, string]> = {};
    for (const id of [...whole.starts.keys()].sort()) o[id] = [String(whole.starts.get(id)!.since), String(whole.starts.get(id)!.created)];
    assert.equal(text, JSON.stringify({ v: 1, starts: o }), 'the same text as the record always had');
  });

  it("plans 10,000 evacuations in one walk of what was released, not one walk per item", () => {
    const items = Array.from({ length: BATCH }, (_, i) => nodeItem(host(i), { action: EVACUATE, start: T0 }));
    let visited = 0;
    const entries = Array.from({ length: 1_000 }, (_, i): [string, string] => [`container_${i}`, host(i)]);
    const inner = new Map(entries);
    // A released map that counts the entries anyone walks through.
    const released: ReadonlyMap<string, string> = {
      get size() {
        return inner.size;
      },
      get: (k) => inner.get(k),
      has: (k) => inner.has(k),
      forEach: (f) => inner.forEach(f),
      keys: () => inner.keys(),
      values: () => inner.values(),
      entries: () => counted(),
      [Symbol.iterator]: () => counted(),
    };
    function* counted(): MapIterator<[string, string]> {
      for (const e of inner) {
        visited++;
        yield e;
      }
    }
    const plans = planEvacuations(items, new Map(), indexContainers([]), released, 600_000, { now: T0, mono: 0 });
    assert.equal(plans.size, BATCH);
    assert.deepEqual(plans.get(host(7))?.released, ['container_7']);
    assert.deepEqual(plans.get(host(5_000))?.released, []);
    assert.ok(visited <= 2 * inner.size, `${visited.toLocaleString('en')} entries of ${inner.size} released walked for ${BATCH} items`);
  });
});
