/**
 * The incremental age order: from the last answer and a new snapshot (sorted by id, unchanged items
 * the same objects, as the stores hand them out) it gives exactly effectiveItems()'s list, and it
 * declines (undefined: a full sort follows) when it cannot know.
 */
import { strict as assert } from 'node:assert';
import { BlockedItem, PERMANENT } from '../../src/model/item';
import { effectiveItems } from '../../src/model/effective';
import { AgeOrder, effectiveOldestFirst, updatedAgeOrder } from '../../src/sync/age-order';
import { APP, nodeItem } from './items';
import { rng } from '../support/random';

const T0 = 1_652_313_600_000;
const OTHER = 'application_1652313600000_0099';

const ids = (l: readonly BlockedItem[]) => l.map((i) => i.id);

describe('sync/age-order', () => {
  it('follows a stream of snapshots (new, replaced, removed, ending items; equal start times) exactly as a full sort would (12 seeds × 150 snapshots)', () => {
    for (let seed = 1; seed <= 12; seed++) {
      const r = rng(seed * 104729);
      const item = (n: number, now: number): BlockedItem => {
        const start = now - Math.floor(r() * 4) * 1000; // many equal start times: ties go by id
        const end = r() < 0.2 ? now + Math.floor(r() * 20_000) : PERMANENT;
        return nodeItem(`h${String(n).padStart(5, '0')}`, { start, end, scope: r() < 0.1 ? OTHER : undefined, cause: `v${Math.floor(r() * 1e6)}` });
      };
      let now = T0;
      const byId = new Map<string, BlockedItem>();
      for (let n = 0; n < 300; n++) byId.set(`h${String(n).padStart(5, '0')}`, item(n, now));
      let snapshot = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
      let prev: AgeOrder = { items: snapshot, applicationId: APP, now, effective: effectiveItems(snapshot, APP, now) };
      let incremental = 0;
      for (let step = 0; step < 150; step++) {
        now += Math.floor(r() * 3000);
        const changes = Math.floor(r() * (r() < 0.1 ? 120 : 12));
        for (let c = 0; c < changes; c++) {
          const n = Math.floor(r() * 600);
          const id = `h${String(n).padStart(5, '0')}`;
          if (r() < 0.25) byId.delete(id);
          else byId.set(id, item(n, now));
        }
        snapshot = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
        const full = effectiveItems(snapshot, APP, now);
        const up = updatedAgeOrder(prev, snapshot, APP, now);
        if (up) {
          incremental++;
          assert.deepEqual(ids(up), ids(full), `seed ${seed}, step ${step}`);
        }
        assert.deepEqual(ids(effectiveOldestFirst(snapshot, APP, now, prev).effective), ids(full), `seed ${seed}, step ${step} (from the last answer)`);
        prev = { items: snapshot, applicationId: APP, now, effective: full };
      }
      assert.ok(incremental > 120, `seed ${seed}: the incremental path answered ${incremental} of 150`);
    }
  });

  it('a snapshot out of id order still gives the right list (the walk sees more changes), and a change of most items is declined', () => {
    const r = rng(7);
    const items = Array.from({ length: 40 }, (_, i) => nodeItem(`n${String(i).padStart(3, '0')}`, { start: T0 + Math.floor(r() * 5) }));
    const prev: AgeOrder = { items, applicationId: APP, now: T0, effective: effectiveItems(items, APP, T0) };
    for (let round = 0; round < 50; round++) {
      const next = items.filter(() => r() < 0.9).concat(Array.from({ length: 3 }, (_, i) => nodeItem(`m${round}-${i}`, { start: T0 + Math.floor(r() * 5) })));
      for (let s = 0; s < 4; s++) {
        const x = Math.floor(r() * next.length);
        const y = Math.floor(r() * next.length);
        [next[x], next[y]] = [next[y], next[x]];
      }
      const up = updatedAgeOrder(prev, next, APP, T0);
      if (up) assert.deepEqual(ids(up), ids(effectiveItems(next, APP, T0)), `round ${round}`);
    }
    const many = Array.from({ length: 100 }, (_, i) => nodeItem(`n${String(i).padStart(3, '0')}`, { start: T0 }));
    const prevMany: AgeOrder = { items: many, applicationId: APP, now: T0, effective: many };
    assert.ok(updatedAgeOrder(prevMany, [...many, nodeItem('z', { start: T0 - 1 })], APP, T0));
    assert.equal(updatedAgeOrder(prevMany, many.map((i) => ({ ...i })), APP, T0), undefined);
  });

  it('a clock that went back, or another application, gets a full sort: an item over at the last call counts again', () => {
    const ending = nodeItem('a', { start: T0, end: T0 + 1000 });
    const items = [ending, nodeItem('b', { start: T0 + 1 })];
    const later = effectiveOldestFirst(items, APP, T0 + 5000);
    assert.deepEqual(ids(later.effective), ['b']);
    assert.deepEqual(ids(effectiveOldestFirst(items, APP, T0 + 10, later).effective), ['a', 'b']);
    const scoped = [nodeItem('c', { start: T0, scope: OTHER }), ...items];
    const other = effectiveOldestFirst(scoped, OTHER, T0 + 10, later);
    assert.deepEqual(ids(other.effective), ['a', 'c', 'b']);
    assert.deepEqual(ids(effectiveOldestFirst(scoped, APP, T0 + 10, other).effective), ['a', 'b']);
  });
});
