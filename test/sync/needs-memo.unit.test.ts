/** NeedsMemo: the poll's "what do the items in force need read" kept per snapshot, exact at every instant. */
import { strict as assert } from 'node:assert';
import { NeedsMemo, needs } from '../../src/sync/read-policy';
import { APP, nodeItem } from './items';

const T = 1_652_313_600_000;

describe('read policies: NeedsMemo', () => {
  it('answers as needs() does at every instant: before, at and after an item ends (inclusive expiry)', () => {
    const items = [nodeItem('a', { end: T + 1_000 }), nodeItem('b', { end: T + 5_000 }), nodeItem('c', { scope: 'application_1652313600000_0099' })];
    const memo = new NeedsMemo();
    for (const now of [T, T + 999, T + 1_000, T + 1_001, T + 4_999, T + 5_000, T + 9_000]) {
      assert.deepEqual(memo.get(items, APP, now), needs(items, APP, now), `at +${now - T}`);
    }
    assert.deepEqual(memo.get(items, APP, T + 1_000).nodeHosts, ['b']);
    assert.deepEqual(memo.get(items, APP, T + 5_000), { nodeHosts: [], any: false });
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
    assert.deepEqual(memo.get(items, APP, T + 1_000).nodeHosts, ['b']);
  });
});
