/** NeedsMemo: the poll's "what do the items in force need read" kept per snapshot, exact at every instant. */
import { strict as assert } from 'node:assert';
import { NeedsMemo, NeedsNow, needs } from '../../src/sync/read-policy';
import { DecisionMemo, DesiredInput, DesiredPlan, blacklistSet, diffWith, planDesired, planWith } from '../../src/sync/desired';
import { APP, nodeItem } from './items';

const T = 1_652_313_600_000;
/** A memo's answer with its hosts listed, as needs() gives them. */
const listed = (n: NeedsNow) => ({ nodeHosts: [...n.nodeHosts()], any: n.any });

describe('read policies: NeedsMemo', () => {
  it('answers as needs() does at every instant: before, at and after an item ends (inclusive expiry)', () => {
    const items = [nodeItem('a', { end: T + 1_000 }), nodeItem('b', { end: T + 5_000 }), nodeItem('c', { scope: 'application_1652313600000_0099' })];
    const memo = new NeedsMemo();
    for (const now of [T, T + 999, T + 1_000, T + 1_001, T + 4_999, T + 5_000, T + 9_000]) {
      const m = memo.get(items, APP, now);
      assert.deepEqual(listed(m), needs(items, APP, now), `at +${now - T}`);
      assert.equal(m.nodeCount, m.nodeHosts().length);
      assert.equal(m.nodeHosts(), m.nodeHosts(), 'listed once, then kept');
    }
    assert.deepEqual(memo.get(items, APP, T + 1_000).nodeHosts(), ['b']);
    assert.deepEqual(listed(memo.get(items, APP, T + 5_000)), { nodeHosts: [], any: false });
  });

  it('keeps one answer (the same array) while the snapshot and the instant allow, and computes again when either moves', () => {
    const items = [nodeItem('a', { end: T + 1_000 }), nodeItem('b')];
    const memo = new NeedsMemo();
    const first = memo.get(items, APP, T);
    assert.equal(memo.get(items, APP, T + 999), first);
    // Another snapshot (the store changed), another application, the clock back before the answer or past an end.
    const other = [...items];
    assert.notEqual(memo.get(other, APP, T + 999), first);
    const again = memo.get(items, APP, T);
    assert.notEqual(memo.get(items, 'application_1652313600000_0002', T), again);
    const atT = memo.get(items, APP, T + 500);
    assert.notEqual(memo.get(items, APP, T + 100), atT, 'a clock that went back is not trusted to the old answer');
    assert.deepEqual(memo.get(items, APP, T + 1_000).nodeHosts(), ['b']);
  });
});

describe('planWith: the same snapshot planned again (with what the last call remembered)', () => {
  const nodes = [
    { host: 'a', state: 'RUNNING' as const },
    { host: 'b', state: 'RUNNING' as const },
  ];
  const input = (items: ReturnType<typeof nodeItem>[], now: number, more: Partial<Parameters<typeof planDesired>[0]> = {}) => ({ items, applicationId: APP, now, nodes, maxBlockedFraction: 1, ...more });

  it('is the very same plan while nothing it depends on moves, and a fresh one at an end, a new snapshot, other counts or a clock gone back', () => {
    let memo: DecisionMemo = {};
    const planDesired = (i: DesiredInput): DesiredPlan => {
      const r = planWith(i, memo);
      memo = r.memo;
      return r.plan;
    };
    const items = [nodeItem('a', { end: T + 1_000 }), nodeItem('b')];
    const p0 = planDesired(input(items, T));
    assert.equal(planDesired(input(items, T + 999)), p0);
    const atEnd = planDesired(input(items, T + 1_000));
    assert.notEqual(atEnd, p0);
    assert.deepEqual(atEnd.blacklist, ['b'], 'inclusive expiry: a is gone at its end');
    assert.notEqual(planDesired(input([...items], T + 1_000)), atEnd, 'another snapshot');
    const again = planDesired(input(items, T + 1_000));
    assert.notEqual(planDesired(input(items, T + 1_000, { runningNodes: 1 })), again, 'other counts');
    const later = planDesired(input(items, T + 2_000));
    const back = planDesired(input(items, T + 1_500));
    assert.notEqual(back, later, 'a clock that went back is planned again');
    assert.deepEqual(planDesired(input(items, T)).blacklist, ['a', 'b'], 'before the end: both again');
  });
});

describe('diffWith: a plan against the same belief again', () => {
  it('is the same answer for the same plan set and actual set; another actual, a repush or a caller-made set are diffed afresh', () => {
    let memo: DecisionMemo = {};
    const diffBlacklist = (want: ReadonlySet<string>, have: ReadonlySet<string>, repush = false, maybe: string[] = []) => {
      const r = diffWith(want, have, repush, maybe, memo);
      memo = r.memo;
      return r.diff;
    };
    const plan = planDesired({ items: [nodeItem('a'), nodeItem('b')], applicationId: APP, now: T, nodes: [], maxBlockedFraction: 1, assumeRunning: true, runningNodes: 10 });
    const want = blacklistSet(plan);
    assert.equal(blacklistSet(plan), want);
    const actual = new Set(['b', 'c']);
    const d = diffBlacklist(want, actual);
    assert.deepEqual(d, { additions: ['a'], removals: ['c'] });
    assert.equal(diffBlacklist(want, actual), d);
    assert.deepEqual(diffBlacklist(want, new Set(['a', 'b'])), { additions: [], removals: [] });
    assert.deepEqual(diffBlacklist(want, actual, true), { additions: ['a', 'b'], removals: ['c'] });
    const mine = new Set(['a']);
    assert.deepEqual(diffBlacklist(mine, actual), { additions: ['a'], removals: ['b', 'c'] });
    mine.add('c');
    assert.deepEqual(diffBlacklist(mine, actual), { additions: ['a'], removals: ['b'] }, 'a set the caller may change is never remembered');
    assert.deepEqual(diffBlacklist(want, actual, false, ['d']), { additions: ['a'], removals: ['c', 'd'] });
    assert.notEqual(diffWith(want, actual, false, [], {}).diff, d, 'without the memo: the same answer, computed again');
    assert.deepEqual(diffWith(want, actual, false, [], {}).diff, d);
  });
});
