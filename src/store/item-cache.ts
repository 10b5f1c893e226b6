/**
 * The store's decoded items, sorted by id, tagged with the store version they reflect. A store
 * keeps it current through its own writes (each write knows exactly what it changed), so the
 * sync engine's list() after a local change costs a copy, not a re-read and re-decode of every
 * row; a version moved by another process simply means a full reload.
 * Items are shared with callers, who never mutate them.
 */
import { BlockedItem } from '../model/item';

export class ItemCache {
  constructor(
    public version: number,
    private readonly items: BlockedItem[],
  ) {}

  private indexOf(id: string): { found: boolean; at: number } {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const m = this.items[mid].id;
      if (m === id) return { found: true, at: mid };
      if (m < id) lo = mid + 1;
      else hi = mid;
    }
    return { found: false, at: lo };
  }

  upsert(item: BlockedItem): void {
    const { found, at } = this.indexOf(item.id);
    if (found) this.items[at] = item;
    else this.items.splice(at, 0, item);
  }

  delete(id: string): void {
    const { found, at } = this.indexOf(id);
    if (found) this.items.splice(at, 1);
  }

  snapshot(): BlockedItem[] {
    return [...this.items];
  }
}
