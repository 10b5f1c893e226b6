/**
 * One info series per item in force (`blocklist_item_info{id,kind,action,scope,source} 1`), so a
 * dashboard can list which nodes are blocked, how and by what. Bounded: at most `max` items get a
 * series (the newest first: what changed lately is what an on-call engineer asks about), and
 * `blocklist_item_series_omitted` says how many did not; the counts (numBlockedNodes, …) stay exact.
 */
import { Gauge, Registry } from 'prom-client';
import { BlockedItem } from '../model/item';
import { StoreReader } from './store-reading';

export const ITEM_SERIES_NAMES = {
  info: 'blocklist_item_info',
  omitted: 'blocklist_item_series_omitted',
} as const;

/** The `max` newest of `items` (latest start first, then id), without sorting all of them. */
export function newestItems(items: readonly BlockedItem[], max: number): BlockedItem[] {
  if (max <= 0) return [];
  const newer = (a: BlockedItem, b: BlockedItem) => a.startTimestamp > b.startTimestamp || (a.startTimestamp === b.startTimestamp && a.id < b.id);
  if (items.length <= max) return [...items].sort((a, b) => (newer(a, b) ? -1 : newer(b, a) ? 1 : 0));
  // A min-heap of the `max` newest seen so far: n log(max) at 100,000 items instead of a full sort.
  const heap: BlockedItem[] = [];
  const up = (i: number) => {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!newer(heap[p], heap[i])) break;
      [heap[p], heap[i]] = [heap[i], heap[p]];
      i = p;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && newer(heap[m], heap[l])) m = l;
      if (r < heap.length && newer(heap[m], heap[r])) m = r;
      if (m === i) return;
      [heap[m], heap[i]] = [heap[i], heap[m]];
      i = m;
    }
  };
  for (const it of items) {
    if (heap.length < max) {
      heap.push(it);
      up(heap.length - 1);
    } else if (newer(it, heap[0])) {
      heap[0] = it;
      down(0);
    }
  }
  return heap.sort((a, b) => (newer(a, b) ? -1 : newer(b, a) ? 1 : 0));
}

/** Registers the item info series and its overflow count on `registry`, read through `reader`. */
export function registerItemSeries(registry: Registry, reader: StoreReader, max: number): void {
  const registers = [registry];
  // One choice per store reading, shared by both gauges of a scrape (and by later scrapes of it).
  const chosen = new WeakMap<readonly BlockedItem[], BlockedItem[]>();
  const shown = (inForce: readonly BlockedItem[]): BlockedItem[] => {
    let s = chosen.get(inForce);
    if (!s) chosen.set(inForce, (s = newestItems(inForce, max)));
    return s;
  };
  new Gauge({
    name: ITEM_SERIES_NAMES.info,
    help: `Always 1: one series per item in force for this application (at most ${max}, the newest; see ${ITEM_SERIES_NAMES.omitted}), labelled with its id, kind, action, scope and source.`,
    labelNames: ['id', 'kind', 'action', 'scope', 'source'] as const,
    registers,
    async collect() {
      const r = await reader.read();
      if (!r) return;
      this.reset();
      for (const it of shown(r.inForce)) this.set({ id: it.id, kind: it.kind, action: it.action, scope: it.scope, source: it.source ?? '' }, 1);
    },
  });
  new Gauge({
    name: ITEM_SERIES_NAMES.omitted,
    help: `Items in force without a ${ITEM_SERIES_NAMES.info} series because of its bound (metrics.items.max-series).`,
    registers,
    async collect() {
      const r = await reader.read();
      if (r) this.set(r.inForce.length - shown(r.inForce).length);
    },
  });
}
