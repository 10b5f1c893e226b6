/**
 * What counts at time t. Inclusive expiry, as Flink's DefaultBlocklistTracker#removeTimeoutNodes:
 * an item with endTimestamp E counts while start <= t < E and is gone at t >= E.
 */
import { BlockedItem, byAge } from './item';
import { scopeCovers } from './scope';

export function isExpired(item: BlockedItem, now: number): boolean {
  return now >= item.endTimestamp;
}

/** Effective at `now` (a clock that jumped back before the start does not count it early or late). */
export function isEffective(item: BlockedItem, now: number): boolean {
  return !isExpired(item, now);
}

/** Whether the item counts for the application: its scope is cluster or names the application. */
export function appliesTo(item: BlockedItem, applicationId: string | undefined): boolean {
  return scopeCovers(item.scope, applicationId);
}

/** The items that count for one application at `now`, in the order given (counting needs no order). */
export function inForce(items: Iterable<BlockedItem>, applicationId: string | undefined, now: number): BlockedItem[] {
  const out: BlockedItem[] = [];
  for (const it of items) if (appliesTo(it, applicationId) && isEffective(it, now)) out.push(it);
  return out;
}

/** The items that count for one application at `now`, oldest first (the order the safety cap keeps). */
export function effectiveItems(items: Iterable<BlockedItem>, applicationId: string | undefined, now: number): BlockedItem[] {
  return inForce(items, applicationId, now).sort(byAge);
}

/** The earliest finite endTimestamp after `now` (of the items `only` keeps): when the effective set changes next by itself. */
export function nextExpiry(items: Iterable<BlockedItem>, now: number, only?: (item: BlockedItem) => boolean): number | undefined {
  let next: number | undefined;
  for (const it of items) {
    if (it.endTimestamp > now && Number.isFinite(it.endTimestamp) && (next === undefined || it.endTimestamp < next) && (!only || only(it))) next = it.endTimestamp;
  }
  return next;
}
