import { strict as assert } from 'node:assert';
import { mergeCauses, mergeItems, newItem } from '../../src/model/merge';
import { EVACUATE, MARK_BLOCKED, PERMANENT, BlockAction } from '../../src/model/item';
import { BlockSpec } from '../../src/model/validate';

const actor = { by: 'alice', from: '127.0.0.1' };
const spec = (over: Partial<BlockSpec> = {}): BlockSpec => ({
  id: 'node1', kind: 'node', node: 'node1', action: MARK_BLOCKED, end: { type: 'at', at: 2000 }, cause: 'a', scope: 'cluster', allowMerge: true, ...over,
});

describe('model/merge (FLIP-224 merge rules)', () => {
  it('joins causes by token, de-duplicated, first-seen order', () => {
    assert.equal(mergeCauses('a', 'b'), 'a,b');
    assert.equal(mergeCauses('a', 'a'), 'a');
    assert.equal(mergeCauses('a,b', 'b'), 'a,b');
    assert.equal(mergeCauses('a,b', 'c,a'), 'a,b,c');
  });

  it('keeps the max end (permanent wins) and the original start', () => {
    const old = newItem(spec(), 1000, actor);
    const later = newItem(spec({ end: { type: 'at', at: 3000 }, cause: 'b' }), 1500, actor);
    const m = mergeItems(old, later);
    assert.equal(m.outcome, 'merged');
    assert.equal(m.item.endTimestamp, 3000);
    assert.equal(m.item.startTimestamp, 1000);
    const earlier = newItem(spec({ end: { type: 'at', at: 1200 } }), 1100, actor);
    const m2 = mergeItems(old, earlier);
    assert.equal(m2.outcome, 'unchanged', 'an earlier end with the same cause adds nothing: the stored end 2000 stays');
    const perm = mergeItems(old, newItem(spec({ end: { type: 'permanent' } }), 1100, actor));
    assert.ok(perm.outcome === 'merged' && perm.item.endTimestamp === PERMANENT);
  });

  const table: [BlockAction, BlockAction, BlockAction][] = [
    [MARK_BLOCKED, EVACUATE, EVACUATE],
    [EVACUATE, MARK_BLOCKED, EVACUATE],
    [MARK_BLOCKED, MARK_BLOCKED, MARK_BLOCKED],
    [EVACUATE, EVACUATE, EVACUATE],
  ];
  for (const [a, b, want] of table) {
    it(`merges action ${a} + ${b} = ${want}`, () => {
      const m = mergeItems(newItem(spec({ action: a }), 1000, actor), newItem(spec({ action: b }), 1001, actor));
      // The same action adds nothing: unchanged keeps the stored item (and so its action).
      assert.equal(m.outcome, a === want ? 'unchanged' : 'merged');
      if (m.outcome === 'merged') assert.equal(m.item.action, want);
    });
  }

  it('an identical re-merge changes nothing, not even the updated stamp', () => {
    const old = newItem(spec(), 1000, actor);
    const m = mergeItems(old, newItem(spec(), 5000, { by: 'bob', from: 'x' }));
    assert.equal(m.outcome, 'unchanged');
  });
});
