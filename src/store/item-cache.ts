/**
 * The store's decoded items, sorted by id, tagged with the store version they reflect. A store
 * keeps it current through its own writes (each write knows exactly what it changed), so the
 * sync engine's list() after a local change costs a copy, not a re-read and re-decode of every
 * row; a version moved by another process simply means a full reload.
 * Items are shared with callers, who never mutate them.
 *
 * Writes come far more often than lists: a stream of API writes makes a group commit every
 * millisecond or so and a pass (the only reader) every 100 ms. So a write does not keep the list
 * sorted: an item of a new id waits in `added` (a Map: found and replaced in O(1)) and is merged
 * in, in one walk, when the list is next read or `added` has grown to a fraction of the list:
 * splicing each new id into place would move half the list per item, on the event loop.
 */
import { BlockedItem } from '../model/item';

/** `added` is merged into the list once it holds more than this share of it (bounds its size and a lookup's misses). */
const SETTLE_SHARE = 1 / 8;
/** …but never for fewer than this many: merging is a walk of the whole list. */
const SETTLE_MIN = 1024;

const byId = (a: BlockedItem, b: BlockedItem): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The first place at or after `from` in `items` (sorted by id) whose id is not below `id`. */
function lowerBound(items: readonly BlockedItem[], id: string, from: number): number {
  let lo = from;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (items[mid].id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class ItemCache {
  /** Items of ids not in `items` yet, newest version of each. */
  private readonly added = new Map<string, BlockedItem>();
  /**
   * `items` was handed out by snapshot(): copied before it is changed in place (copy on write). A
   * stream of new blocks changes only `added` between two reads, so a read hands out the merged
   * list itself instead of a second copy of it.
   */
  private shared = false;

  /**
   * `items`: one per id, as the store listed them. They are kept sorted by JS string order (what
   * every lookup here compares with); a store's own order can differ (SQLite's ORDER BY id
   * compares UTF-8 bytes, which puts characters beyond U+FFFF after U+E000-U+FFFF, JS before), so
   * the order is checked (one comparison per item) and the list sorted only when it is not.
   */
  constructor(
    public version: number,
    private items: BlockedItem[],
  ) {
    for (let i = 1; i < items.length; i++) {
      if (!(items[i - 1].id < items[i].id)) {
        items.sort(byId);
        break;
      }
    }
  }

  private indexOf(id: string): { found: boolean; at: number } {
    const at = lowerBound(this.items, id, 0);
    return { found: at < this.items.length && this.items[at].id === id, at };
  }

  upsert(item: BlockedItem): void {
    if (this.added.has(item.id)) {
      this.added.set(item.id, item);
      return;
    }
    const { found, at } = this.indexOf(item.id);
    if (found) this.own()[at] = item;
    else {
      this.added.set(item.id, item);
      if (this.added.size > Math.max(SETTLE_MIN, this.items.length * SETTLE_SHARE)) this.settle();
    }
  }

  /** Every item in; the last of the same id wins. */
  upsertAll(changed: readonly BlockedItem[]): void {
    for (const item of changed) this.upsert(item);
  }

  delete(id: string): void {
    if (this.added.delete(id)) return;
    const { found, at } = this.indexOf(id);
    if (found) this.own().splice(at, 1);
  }

  /**
   * Every id out. A few go by one splice each (one native memmove of the tail); more in one walk
   * of the list: a splice per id is 100 million element moves for an expiry of 1,000 of 100,000.
   */
  deleteAll(ids: readonly string[]): void {
    if (ids.length <= 64) {
      for (const id of ids) this.delete(id);
      return;
    }
    const gone = new Set(ids);
    for (const id of gone) this.added.delete(id);
    this.items = this.items.filter((item) => !gone.has(item.id));
    this.shared = false;
  }

  /** Every item, sorted by id: never changed afterwards (later changes go to a copy). */
  snapshot(): readonly BlockedItem[] {
    this.settle();
    this.shared = true;
    return this.items;
  }

  /** The list, to change in place: a copy of it if a snapshot holds it. */
  private own(): BlockedItem[] {
    if (this.shared) {
      this.items = this.items.slice();
      this.shared = false;
    }
    return this.items;
  }

  /**
   * Merges `added` into the sorted list (their ids are disjoint): each new item's place is found by
   * binary search from the last one's, and the old items between are copied without comparing ids
   * (a comparison per old item would be most of a pass's cost at tens of thousands of items).
   */
  private settle(): void {
    if (this.added.size === 0) return;
    const incoming = [...this.added.values()].sort(byId);
    this.added.clear();
    const old = this.items;
    // Pushed, not preallocated: an array made with a length stays "holey" in V8, slower to walk.
    const out: BlockedItem[] = [];
    let from = 0;
    for (const item of incoming) {
      const at = lowerBound(old, item.id, from);
      while (from < at) out.push(old[from++]);
      out.push(item);
    }
    while (from < old.length) out.push(old[from++]);
    this.items = out;
    this.shared = false;
  }
}
