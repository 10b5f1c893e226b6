/**
 * The items that count for an application, oldest first (the order the safety cap keeps), brought
 * up to date from the last snapshot's answer instead of sorted again. Pure: the same snapshot,
 * application and time give exactly effectiveItems()'s list; the caller's last answer only saves work.
 *
 * Why: every pass plans, and under a stream of writes a pass runs every 100 ms or so on a
 * snapshot that differs from the last one by a few hundred items. Sorting all of them by age each
 * time would be the largest part of a pass, on the event loop; walking the
 * two snapshots side by side to find what changed costs a pointer comparison per unchanged item,
 * because a store's snapshot hands out the same item object until the item changes.
 */
import { BlockedItem, byAge } from '../model/item';
import { appliesTo, effectiveItems, isEffective } from '../model/effective';

/** An answer of effectiveOldestFirst: `effective` is effectiveItems(items, applicationId, now). */
export interface AgeOrder {
  items: readonly BlockedItem[];
  applicationId: string | undefined;
  now: number;
  effective: BlockedItem[];
}

/** Changes beyond this share of the snapshot: sorting everything is as cheap as merging. */
const MAX_CHANGED_SHARE = 1 / 4;

/**
 * effectiveItems(items, applicationId, now), incrementally from `prev` (the caller's last answer)
 * when it can; the answer to keep for the next call. Like every snapshot, `items` is replaced,
 * never changed in place, and the answer is only read.
 */
export function effectiveOldestFirst(items: readonly BlockedItem[], applicationId: string | undefined, now: number, prev?: AgeOrder): AgeOrder {
  // Time only ends items (an item counts while now < its end), so a later `now` never brings back
  // one the last answer left out; a clock that went back may, and gets a full sort.
  const effective = (prev && prev.applicationId === applicationId && now >= prev.now && updatedAgeOrder(prev, items, applicationId, now)) || effectiveItems(items, applicationId, now);
  return { items, applicationId, now, effective };
}

/**
 * The last answer, less what left or changed, plus what is new, merged by age; undefined when too
 * much changed. The walk advances both snapshots together while they hold the same objects and
 * compares ids only where they differ, so unchanged items cost one pointer comparison each. It
 * relies on what every store's snapshot is: sorted by id, each item once. Were a snapshot not
 * sorted, the walk would only see more changes than there are (an item both gone and new is
 * dropped from the kept ones and sorted in again): still the right list, or a full sort.
 */
export function updatedAgeOrder(prev: AgeOrder, items: readonly BlockedItem[], applicationId: string | undefined, now: number): BlockedItem[] | undefined {
  const before = prev.items;
  const limit = Math.max(16, Math.floor(items.length * MAX_CHANGED_SHARE));
  const gone = new Set<BlockedItem>();
  const fresh: BlockedItem[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length && j < items.length) {
    const a = before[i];
    const b = items[j];
    if (a === b) {
      i++;
      j++;
      continue;
    }
    if (a.id <= b.id) {
      gone.add(a);
      i++;
    }
    if (b.id <= a.id) {
      fresh.push(b);
      j++;
    }
    if (gone.size + fresh.length > limit) return undefined;
  }
  if (gone.size + fresh.length + (before.length - i) + (items.length - j) > limit) return undefined;
  while (i < before.length) gone.add(before[i++]);
  while (j < items.length) fresh.push(items[j++]);

  const added: BlockedItem[] = [];
  for (const it of fresh) if (appliesTo(it, applicationId) && isEffective(it, now)) added.push(it);
  added.sort(byAge);
  // The kept ones (the last answer less what left, changed or ended) merged with the new ones in
  // one walk. New blocks are mostly the newest, so most kept ones are copied without a comparison.
  const out: BlockedItem[] = [];
  const order = prev.effective;
  const keep = (it: BlockedItem) => isEffective(it, now) && (gone.size === 0 || !gone.has(it));
  let k = 0;
  let n = 0;
  const firstNew = added.length > 0 ? firstAfter(order, added[0]) : order.length;
  for (; k < firstNew; k++) if (keep(order[k])) out.push(order[k]);
  while (k < order.length && n < added.length) {
    if (!keep(order[k])) k++;
    else out.push(byAge(order[k], added[n]) <= 0 ? order[k++] : added[n++]);
  }
  for (; k < order.length; k++) if (keep(order[k])) out.push(order[k]);
  while (n < added.length) out.push(added[n++]);
  return out;
}

/** How many of `sorted` (by age) come before `item`. */
function firstAfter(sorted: readonly BlockedItem[], item: BlockedItem): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (byAge(sorted[mid], item) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
