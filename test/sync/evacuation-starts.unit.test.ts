/**
 * Per-job evacuation starts, pure: the planner counts each job's grace period from that job's own
 * start (fake time: plain numbers), and the record's rules (codec, what is kept, two copies).
 */
import { strict as assert } from 'node:assert';
import { EVACUATE } from '../../src/model/item';
import { AppContainer } from '../../src/yarn/types';
import { Desired, Observed, Rules, reconcile } from '../../src/sync/reconcile';
import { emptyMemory } from '../../src/sync/memory';
import { indexContainers } from '../../src/sync/watch-containers';
import { GONE_MARGIN_MS, JobStart, decodeStarts, encodeStarts, freshStart, helpsNobody, liveBlocks, mayEvacuate, nextStarts, startOf, startsRecordKey, unionStarts } from '../../src/sync/evacuation-starts';
import { APP, containerOf, nodeItem, tmItem } from './items';

const T0 = 1_652_313_600_000;
const HOUR = 3_600_000;
const RULES: Rules = { maxBlockedFraction: 1, evacuationTimeoutMs: 0, releaseBatchSize: 500, capNodeCountMemoryMs: 300_000, steps: { maxParallel: 0, checkpointTimeoutMs: 30_000, stepTimeoutMs: 300_000 } };
const tm = (n: number, host: string): AppContainer => ({ containerId: containerOf(1, n), nodeId: `${host}:8041`, host, state: 'RUNNING' });
const observed = (o: Partial<Observed> = {}): Observed => ({
  actual: new Set(),
  othersHold: new Set(),
  schedulerOnly: [],
  nodes: ['h1', 'h2', 'h3'].map((host) => ({ host, state: 'RUNNING' })),
  containers: indexContainers([tm(2, 'h1'), tm(3, 'h1')]),
  ...o,
});
const desired = (items: Desired['items'], jobStarts: ReadonlyMap<string, JobStart> = new Map()): Desired => ({ items, applicationId: APP, rules: RULES, jobStarts });

describe("sync/evacuation-starts: each job's grace period counts from its own start", () => {
  // A cluster-wide block created at T0; job A (another sidecar) applied it then and, in the
  // previous version, stored that start on the item for everyone.
  const x = nodeItem('h1', { action: EVACUATE, evacuationTimeout: 600, start: T0, evacuationSince: T0 });

  it("job B applying the block two hours after job A waits its full timeout from its own start, not A's", () => {
    const applied = T0 + 2 * HOUR;
    const first = reconcile(observed(), desired([x]), emptyMemory(), applied);
    assert.deepEqual(first.push, { additions: ['h1'], removals: [] });
    const status = first.view.evacuations?.statuses.get('h1');
    assert.equal(status?.phase, 'WAIT_CONTAINER');
    assert.equal(status?.since, applied);
    assert.equal(status?.deadline, applied + 600_000);
    assert.deepEqual(first.releases.batch, []);
    assert.deepEqual(first.starts.get('h1'), { since: applied, created: T0 }, 'recorded after the push');
    assert.equal(first.deadlines.get('evacuation:h1'), applied + 600_000);

    // Later passes read B's stored start: one millisecond before its deadline nothing goes; at it, all.
    const stored = new Map([['h1', { since: applied, created: T0 }]]);
    const onYarn = observed({ actual: new Set(['h1']) });
    const before = reconcile(onYarn, desired([x], stored), emptyMemory(), applied + 599_999);
    assert.equal(before.view.evacuations?.statuses.get('h1')?.phase, 'WAIT_CONTAINER');
    assert.equal(before.starts.size, 0, 'a stored start is not recorded again');
    const at = reconcile(onYarn, desired([x], stored), emptyMemory(), applied + 600_000);
    assert.equal(at.view.evacuations?.statuses.get('h1')?.phase, 'TIMEOUT');
    assert.deepEqual(at.releases.batch, [containerOf(1, 2), containerOf(1, 3)]);
  });

  it("the previous version's one start is this job's only where it had applied the block already (its node on this job's blacklist)", () => {
    const upgraded = reconcile(observed({ actual: new Set(['h1']) }), desired([x]), emptyMemory(), T0 + HOUR);
    assert.equal(upgraded.view.evacuations?.statuses.get('h1')?.since, T0);
    assert.equal(upgraded.view.evacuations?.statuses.get('h1')?.phase, 'TIMEOUT', 'its deadline passed before the upgrade');
    assert.deepEqual(upgraded.starts.get('h1'), { since: T0, created: T0 }, 'and it becomes its own record');
    assert.equal(freshStart(x, new Set(), T0 + HOUR), T0 + HOUR);
    assert.equal(freshStart(tmItem('h1', containerOf(1, 2), { action: EVACUATE, evacuationSince: T0 }), new Set(), T0 + HOUR), T0, 'a task manager item has one job');
    assert.equal(freshStart(nodeItem('h1', { action: EVACUATE }), new Set(['h1']), T0 + 5), T0 + 5);
  });

  it('a stored start of an earlier block of the same id is not the new block\'s; a deferred block has not started', () => {
    const again = nodeItem('h1', { action: EVACUATE, evacuationTimeout: 600, start: T0 + HOUR });
    const d = reconcile(observed({ actual: new Set(['h1']) }), desired([again], new Map([['h1', { since: T0, created: T0 }]])), emptyMemory(), T0 + HOUR);
    assert.equal(d.view.evacuations?.statuses.get('h1')?.since, T0 + HOUR);
    assert.deepEqual(d.starts.get('h1'), { since: T0 + HOUR, created: T0 + HOUR });
    const capped = reconcile(observed(), { ...desired([nodeItem('h2', { start: T0 - 1 }), x]), rules: { ...RULES, maxBlockedFraction: 0.34 } }, emptyMemory(), T0 + HOUR);
    assert.deepEqual(capped.view.plan.deferred.map((i) => i.id), ['h1']);
    assert.equal(capped.starts.size, 0);
  });

  it("another job's task manager item needs no start of ours", () => {
    const mine = tmItem('h1', containerOf(1, 2), { action: EVACUATE });
    const theirs = tmItem('h1', 'container_e01_1652313600000_0002_01_000002', { action: EVACUATE });
    assert.ok(mayEvacuate(mine, APP));
    assert.ok(!mayEvacuate(theirs, APP));
    assert.ok(mayEvacuate(x, APP));
    const d = reconcile(observed(), desired([mine, theirs]), emptyMemory(), T0);
    assert.deepEqual([...d.starts.keys()], [mine.id]);
  });
});

describe('sync/evacuation-starts: the record', () => {
  const s = (since: number, created: number): JobStart => ({ since, created });

  it('round-trips through its text, ids in order; absent = none; the key names the job', () => {
    const starts = new Map([['h2', s(T0 + 5, T0)], ['h1/container_e01_1652313600000_0001_01_000002', s(T0 + 7, T0 + 1)]]);
    const text = encodeStarts(starts);
    assert.equal(text, encodeStarts(new Map([...starts].reverse())));
    assert.deepEqual(decodeStarts(text), { starts: new Map([...starts].sort()) });
    assert.deepEqual(decodeStarts(undefined), { starts: new Map() });
    assert.equal(startsRecordKey(APP), `evacuation.${APP}`);
  });

  it('anything unreadable is reported, and what cannot be read starts afresh (later, never earlier)', () => {
    assert.match(decodeStarts('{oops').problem ?? '', /not JSON/);
    assert.match(decodeStarts('{"v":2,"starts":{}}').problem ?? '', /unknown shape/);
    const partly = decodeStarts('{"v":1,"starts":{"h1":["1","2"],"h2":["soon","2"],"h3":[1,2]}}');
    assert.deepEqual(partly.starts, new Map([['h1', s(1, 2)]]));
    assert.match(partly.problem ?? '', /2 unreadable entries/);
  });

  it("keeps the starts of blocks still stored, adds this pass's, and a second start of one block never moves it", () => {
    const x = nodeItem('h1', { action: EVACUATE, start: T0 });
    const y = nodeItem('h2', { action: EVACUATE, start: T0 + 1 });
    const kept = nextStarts(new Map([['h1', s(T0 + 10, T0)], ['gone', s(T0, T0)], ['h2', s(T0, T0 - 99)]]), [x, y], new Map([['h2', s(T0 + 20, T0 + 1)], ['h1', s(T0 + 30, T0)]]));
    assert.deepEqual(kept, new Map([['h1', s(T0 + 10, T0)], ['h2', s(T0 + 20, T0 + 1)]]));
    assert.equal(startOf(kept, x), T0 + 10);
    assert.equal(startOf(kept, { ...x, created: { ...x.created, at: T0 + 2 } }), undefined);
  });

  it('two copies (two sidecars of one job): the union, the earliest start of a block, the newer block of an id', () => {
    const u = unionStarts(new Map([['a', s(5, 1)], ['b', s(9, 1)]]), new Map([['a', s(3, 1)], ['b', s(20, 2)], ['c', s(1, 1)]]));
    assert.deepEqual(u, new Map([['a', s(3, 1)], ['b', s(20, 2)], ['c', s(1, 1)]]));
  });

  it("a record helps nobody once every block it names is gone and was made more than a day ago (a reader's items may lag a new block, never by a day)", () => {
    const x = nodeItem('h1', { action: EVACUATE, start: T0 });
    const live = liveBlocks([x]);
    const now = T0 + GONE_MARGIN_MS + 1;
    assert.ok(helpsNobody(new Map(), live, now), 'no start at all');
    assert.ok(helpsNobody(new Map([['h2', s(T0, T0)], ['h1', s(T0, T0 - 5)]]), live, now), 'h2 gone; h1 holds a newer block');
    assert.ok(!helpsNobody(new Map([['h2', s(T0, T0)], ['h1', s(T0, T0)]]), live, now), 'h1 is stored');
    assert.ok(!helpsNobody(new Map([['h3', s(now - 10, now - 10)]]), live, now), 'made within the day');
  });
});
