/**
 * The one add/merge decision (as Flink's DefaultBlocklistTracker#tryAddOrMerge decides it for its
 * own blocklist): given what is stored for an id, a new block request and the time, what happens.
 * Pure. Every store runs read → decide → compare-and-set, and the API's dry run calls the same
 * function on the item it read, so a preview can never disagree with the real write.
 */
import { BlockedItem, tagMatches } from './item';
import { isExpired } from './effective';
import { mergeItems } from './merge';

export interface AddRequest {
  /** A complete new item, as model/merge#newItem builds it. */
  item: BlockedItem;
  allowMerge: boolean;
  /** The request named no scope: a merge keeps the stored item's (absent = false: the scopes are united). */
  keepScope?: boolean;
  /**
   * HTTP If-Match: the version of the item the caller saw (model/item#itemTag). Decided here, in
   * the stores' compare-and-set, so the write lands only if the item is still that version.
   */
  ifMatch?: string;
}

/**
 * Why a request was refused, for programs (the API sends it as `code` beside `errors`):
 *  - `exists`: the id is blocked and the request did not set allowMerge (HTTP 409);
 *  - `scope-full`: the merged block would name more applications than a scope holds (HTTP 409);
 *  - `empty-cause`: the merged item would hold no cause at all (HTTP 400);
 *  - `changed`: the request named the version it saw (If-Match) and the item is no longer that
 *    version, or is gone (HTTP 412).
 */
export type ConflictCode = 'exists' | 'scope-full' | 'empty-cause' | 'changed';

export interface Conflict {
  code: ConflictCode;
  message: string;
}

export type Decision =
  /** Nothing live under this id (absent, or past its end): `write` is the request's own item. */
  | { outcome: 'created'; write: BlockedItem }
  /** Merged into the live item: `write` replaces `previous`. */
  | { outcome: 'merged'; write: BlockedItem; previous: BlockedItem }
  /** The request adds nothing to the live item: write nothing, tell nobody. */
  | { outcome: 'unchanged'; item: BlockedItem }
  | { outcome: 'conflict'; existing: BlockedItem; conflict: Conflict };

/**
 * `now` is the request's own time (its item's creation stamp when a store decides): an item past
 * its end is gone even if no expiry run deleted it yet, so a new block of that id starts fresh
 * (new start, none of the old cause) instead of merging into a ghost.
 */
export function decide(existing: BlockedItem | undefined, req: AddRequest, now: number): Decision {
  const live = existing && !isExpired(existing, now) ? existing : undefined;
  if (req.ifMatch !== undefined && !tagMatches(req.ifMatch, live)) return { outcome: 'conflict', existing: live ?? req.item, conflict: changedSince(req.item.id, live) };
  if (!existing || isExpired(existing, now)) return { outcome: 'created', write: req.item };
  if (!req.allowMerge) {
    return { outcome: 'conflict', existing, conflict: { code: 'exists', message: `'${existing.id}' is already blocked; set allowMerge to merge` } };
  }
  const m = mergeItems(existing, req.item, req.keepScope === true);
  switch (m.outcome) {
    case 'unchanged':
      return { outcome: 'unchanged', item: existing };
    case 'merged':
      return { outcome: 'merged', write: m.item, previous: existing };
    case 'conflict':
      return { outcome: 'conflict', existing, conflict: m.conflict };
  }
}

/** The refusal of a write whose If-Match names a version the item no longer has. */
export function changedSince(id: string, current: BlockedItem | undefined): Conflict {
  const message = current
    ? `'${id}' changed since you looked (last changed by ${current.updated.by} at ${new Date(current.updated.at).toISOString()}): nothing was changed; look at it again`
    : `'${id}' was unblocked since you looked (or its block ended): nothing was changed`;
  return { code: 'changed', message };
}
