/**
 * The items that count for an application, oldest first (the order the safety cap keeps), brought
 * up to date from the last snapshot's answer instead of sorted again. Pure in its result: the same
 * snapshot, application and time give exactly effectiveItems()'s list; the memo only saves work.
 *
 * Why: every pass plans, and under a stream of writes a pass runs every 100 ms or so on a
 * snapshot that differs from the last one by a few hundred items. Sorting all of them by age each
 * time was the largest part of a pass (at 30,000 items 5.4 of 14 ms, on the event loop); walking the
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

let last: AgeOrder | undefined;

/**
 * effectiveItems(items, applicationId, now), incrementally from the last call when it can. Like
 * every snapshot, `items` is replaced, never changed in place, and the answer is only read.
 */
export function effectiveOldestFirst(items: readonly BlockedItem[], applicationId: string | undefined, now: number): BlockedItem[] {
  const prev = last;
  // Time only ends items (an item counts while now < its end), so a later `now` never brings back
  // one the last answer left out; a clock that went back may, and gets a full sort.
  const effective = (prev && prev.applicationId === applicationId && now >= prev.now && updatedAgeOrder(prev, items, applicationId, now)) || effectiveItems(items, applicationId, now);
  last = { items, applicationId, now, effective };
  return effective;
}

/**
 * The last answer, less what left or changed, plus what is new, merged by age; undefined when the
 * snapshots are not both sorted by id (the walk needs it) or too much changed.
 */
export function updatedAgeOrder(prev: AgeOrder, items: readonly BlockedItem[], applicationId: string | undefined, now: number): BlockedItem[] | undefined {
  const before = prev.items;
  const limit = Math.max(16, Math.floor(items.length * MAX_CHANGED_SHARE));
  const gone = new Set<BlockedItem>();
  const fresh: BlockedItem[] = [];
  let i = 0;
  let j = 0;
  let lastA = '';
  let lastB = '';
  while (i < before.length || j < items.length) {
    const a = i < before.length ? before[i] : undefined;
    const b = j < items.length ? items[j] : undefined;
    if (a && b && a === b) {
      if ((i > 0 && a.id <= lastA) || (j > 0 && a.id <= lastB)) return undefined;
      lastA = lastB = a.id;
      i++;
      j++;
      continue;
    }
    if (a && (!b || a.id <= b.id)) {
      if (i > 0 && a.id <= lastA) return undefined;
      lastA = a.id;
      gone.add(a);
      i++;
    }
    if (b && (!a || b.id <= a.id)) {
      if (j > 0 && b.id <= lastB) return undefined;
      lastB = b.id;
      fresh.push(b);
      j++;
    }
    if (gone.size + fresh.length > limit) return undefined;
  }
  const kept: BlockedItem[] = [];
  for (const it of prev.effective) if (!gone.has(it) && isEffective(it, now)) kept.push(it);
  const added: BlockedItem[] = [];
  for (const it of fresh) if (appliesTo(it, applicationId) && isEffective(it, now)) added.push(it);
  if (added.length === 0) return kept;
  added.sort(byAge);
  const out: BlockedItem[] = [];
  let k = 0;
  let n = 0;
  while (k < kept.length && n < added.length) out.push(byAge(kept[k], added[n]) <= 0 ? kept[k++] : added[n++]);
  while (k < kept.length) out.push(kept[k++]);
  while (n < added.length) out.push(added[n++]);
  return out;
}
