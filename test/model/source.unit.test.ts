/**
 * An item's `source` (what created it): validated, stored by the codec, kept by merges, and the
 * rule `blocklist import --sync` lifts by.
 */
import { strict as assert } from 'node:assert';
import { BlockSpec, ItemRef, parseBlockRequest } from '../../src/model/validate';
import { mergeItems, newItem } from '../../src/model/merge';
import { MARK_BLOCKED, toWire } from '../../src/model/item';
import { decodeItem, encodeItem } from '../../src/store/codec';
import { toLift } from '../../src/cli/commands/import-plan';
import type { ApiItem } from '../../src/cli/client';

const NOW = 1_652_313_600_000;
const node: ItemRef = { id: 'node1', kind: 'node', node: 'node1' };
const SRC = 'exclude-file:/etc/hadoop/conf/yarn.exclude';
const spec = (over: Partial<BlockSpec> = {}): BlockSpec => ({ ...node, action: MARK_BLOCKED, end: { type: 'permanent' }, cause: 'a', scope: 'cluster', allowMerge: true, ...over });

describe('item source (what created a block)', () => {
  it('is accepted as printable text and refused with a reason otherwise', () => {
    const ok = parseBlockRequest(node, { action: MARK_BLOCKED, cause: 'x', source: SRC }, NOW);
    assert.ok(ok.ok && ok.value.source === SRC);
    const none = parseBlockRequest(node, { action: MARK_BLOCKED, cause: 'x' }, NOW);
    assert.ok(none.ok && none.value.source === undefined);
    for (const [bad, why] of [
      [42, /must be a string/],
      ['', /must not be empty/],
      [' x', /blanks/],
      ['a\nb', /control/],
      ['x'.repeat(5000), /longer than/],
    ] as const) {
      const r = parseBlockRequest(node, { action: MARK_BLOCKED, cause: 'x', source: bad }, NOW);
      assert.ok(!r.ok, String(bad));
      assert.match(r.errors.join('\n'), why);
    }
  });

  it('survives the codec and shows on the wire; rows without it decode as made by hand', () => {
    const it1 = newItem(spec({ source: SRC }), NOW, { by: 'alice', from: 'h' });
    assert.deepEqual(decodeItem(encodeItem(it1)), it1);
    assert.equal(toWire(it1).source, SRC);
    const plain = newItem(spec(), NOW, { by: 'alice', from: 'h' });
    assert.equal(decodeItem(encodeItem(plain)).source, undefined);
    assert.ok(!('source' in toWire(plain)));
  });

  it('is kept by a merge like the start time; a merge from another source changes nothing by itself', () => {
    const fromFile = newItem(spec({ source: SRC }), NOW, { by: 'import', from: 'h' });
    const byHand = newItem(spec({ cause: 'disk' }), NOW + 5, { by: 'bob', from: 'h' });
    const m = mergeItems(fromFile, byHand);
    assert.ok(m.outcome === 'merged' && m.item.source === SRC && m.item.cause === 'a,disk');
    const other = newItem(spec({ source: 'exclude-file:/other' }), NOW + 6, { by: 'import', from: 'h' });
    assert.equal(mergeItems(fromFile, other).outcome, 'unchanged');
    const manual = newItem(spec(), NOW, { by: 'bob', from: 'h' });
    assert.equal(mergeItems(manual, fromFile).outcome, 'unchanged', 'a file re-stating a manual block does not take it over');
  });

  it('import --sync lifts only what this source created and the file no longer names', () => {
    const wire = (id: string, source?: string): ApiItem => ({ id, kind: 'node', action: MARK_BLOCKED, startTimestamp: '1', endTimestamp: '2', cause: 'c', scope: 'cluster', ...(source ? { source } : {}) });
    const current: Record<string, ApiItem> = {
      a: wire('a', SRC),
      b: wire('b', SRC),
      c: wire('c'),
      d: wire('d', 'exclude-file:/other'),
      e: wire('e', SRC),
    };
    assert.deepEqual(toLift(current, SRC, new Set(['a', 'c', 'd'])).map((i) => i.id), ['b', 'e']);
    assert.deepEqual(toLift(current, SRC, new Set()).map((i) => i.id), ['a', 'b', 'e'], 'an empty file lifts all of its blocks');
  });
});
