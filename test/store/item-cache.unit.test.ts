/**
 * The store's decoded-items cache: batched upserts and deletes (new ids pending, merged in one walk) leave it
 * exactly as the same changes applied one by one would, for any mix of new ids, replaced ids,
 * repeated ids in one batch, and deletions of present and absent ids.
 */
import { strict as assert } from 'node:assert';
import { ItemCache } from '../../src/store/item-cache';
import { nodeItem } from '../sync/items';
import { BlockedItem } from '../../src/model/item';
import { rng } from '../support/random';

const ids = (c: ItemCache) => c.snapshot().map((i) => `${i.id}:${i.cause}`);

describe('ItemCache', () => {
  it("keeps JS string order whatever order the store listed in (SQLite's byte order differs beyond U+FFFF): lookups find, nothing is doubled", () => {
    // UTF-8 byte order, as SQLite's ORDER BY id gives it: U+FF41 (EF BD 81) before U+1F600 (F0 9F ...);
    // JS compares UTF-16 code units, where U+1F600 (D83D DE00) comes first.
    const wide = '\uFF41.example';
    const astral = '\u{1F600}.example';
    const cache = new ItemCache(1, [nodeItem('a.example'), nodeItem(wide), nodeItem(astral)]);
    cache.upsert({ ...nodeItem(wide), cause: 'changed' });
    cache.upsert({ ...nodeItem(astral), cause: 'changed too' });
    const ids = cache.snapshot().map((i) => `${i.id}:${i.cause}`);
    assert.deepEqual(ids, [`a.example:test`, `${astral}:changed too`, `${wide}:changed`]);
  });

  it('upsertAll and deleteAll equal the same changes one by one (random batches, small and past the one-walk delete limit, 30 seeds)', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const r = rng(seed);
      const host = () => `h${Math.floor(r() * 600)}.example`;
      // Sometimes past the splice limit (64), so both ways are compared with the one-by-one result.
      const size = (small: number) => Math.floor(r() * (r() < 0.3 ? 200 : small));
      const start = [...new Set(Array.from({ length: 200 }, host))].sort().map((h) => nodeItem(h));
      const batched = new ItemCache(1, [...start]);
      const single = new ItemCache(1, [...start]);
      for (let round = 0; round < 20; round++) {
        if (r() < 0.6) {
          const batch: BlockedItem[] = Array.from({ length: size(12) }, () => ({ ...nodeItem(host()), cause: `round ${round}.${Math.floor(r() * 5)}` }));
          batched.upsertAll(batch);
          for (const item of batch) single.upsert(item);
        } else {
          const gone = Array.from({ length: size(8) }, host);
          batched.deleteAll(gone);
          for (const id of gone) single.delete(id);
        }
        assert.deepEqual(ids(batched), ids(single), `seed ${seed}, round ${round}`);
      }
      const sorted = batched.snapshot().map((i) => i.id);
      assert.deepEqual(sorted, [...sorted].sort(), `seed ${seed}: sorted by id`);
      assert.equal(new Set(sorted).size, sorted.length, `seed ${seed}: one item per id`);
    }
  });

  it('matches a plain map of id to item through any mix of upserts, deletes and snapshots, past the merge threshold (8 seeds)', () => {
    for (let seed = 1; seed <= 8; seed++) {
      // Odd seeds read often; even ones almost never, so new ids pile up past the merge threshold (1,024).
      const readShare = seed % 2 ? 0.03 : 0.0005;
      const r = rng(seed * 7919);
      const host = () => `h${Math.floor(r() * 6000)}.example`;
      const model = new Map<string, BlockedItem>();
      const start = [...new Set(Array.from({ length: 300 }, host))].sort().map((h) => nodeItem(h));
      for (const i of start) model.set(i.id, i);
      const c = new ItemCache(1, [...start]);
      for (let step = 0; step < 2000; step++) {
        const x = r();
        if (x < 0.55) {
          const item = { ...nodeItem(host()), cause: `step ${step}` };
          c.upsert(item);
          model.set(item.id, item);
        } else if (x < 0.7) {
          const batch = Array.from({ length: Math.floor(r() * 150) }, () => ({ ...nodeItem(host()), cause: `batch ${step}` }));
          c.upsertAll(batch);
          for (const item of batch) model.set(item.id, item);
        } else if (x < 0.85) {
          const id = r() < 0.5 ? host() : (start[Math.floor(r() * start.length)]?.id ?? host());
          c.delete(id);
          model.delete(id);
        } else if (x < 0.9) {
          const gone = Array.from({ length: Math.floor(r() * 120) }, host);
          c.deleteAll(gone);
          for (const id of gone) model.delete(id);
        } else if (x < 0.9 + readShare) {
          const expected = [...model.values()].sort((a, b) => (a.id < b.id ? -1 : 1)).map((i) => `${i.id}:${i.cause}`);
          assert.deepEqual(ids(c), expected, `seed ${seed}, step ${step}`);
        }
      }
      const expected = [...model.values()].sort((a, b) => (a.id < b.id ? -1 : 1)).map((i) => `${i.id}:${i.cause}`);
      assert.deepEqual(ids(c), expected, `seed ${seed}: at the end`);
    }
  });

  it('in one batch the last item of an id wins', () => {
    const c = new ItemCache(1, [nodeItem('b')]);
    c.upsertAll([{ ...nodeItem('a'), cause: 'first' }, { ...nodeItem('c'), cause: 'x' }, { ...nodeItem('a'), cause: 'second' }]);
    assert.deepEqual(ids(c), ['a:second', `b:${nodeItem('b').cause}`, 'c:x']);
  });

  it('a snapshot is a copy: later changes do not reach it', () => {
    const c = new ItemCache(1, [nodeItem('a')]);
    const before = c.snapshot();
    c.upsertAll([nodeItem('b'), nodeItem('c')]);
    c.deleteAll(['a', 'b']);
    assert.deepEqual(before.map((i) => i.id), ['a']);
    assert.deepEqual(c.snapshot().map((i) => i.id), ['c']);
  });
});
