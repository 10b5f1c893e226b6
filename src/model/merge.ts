/**
 * Creating an item and merging a new request into an existing one (FLIP-224 rules: EVACUATE wins, the later end wins, causes are joined).
 * Flink's shipped DefaultBlocklistTracker replaces the whole record when the new end is later and
 * drops it otherwise; we follow the FLIP instead: EVACUATE wins, max end, causes joined.
 */
import { BlockedItem, EVACUATE, sameState, Stamp } from './item';
import type { Conflict } from './decide';
import { causeTokens, mergeCauses } from './cause';
import { unionScopes } from './scope';

export { mergeCauses };
import { BlockSpec, resolveEnd } from './validate';

export interface Actor {
  by: string;
  from: string;
}

export function newItem(spec: BlockSpec, now: number, actor: Actor): BlockedItem {
  const stamp: Stamp = { by: actor.by, from: actor.from, at: now };
  const item: BlockedItem = {
    id: spec.id,
    kind: spec.kind,
    node: spec.node,
    action: spec.action,
    startTimestamp: now,
    endTimestamp: resolveEnd(spec.end, now),
    cause: spec.cause,
    scope: spec.scope,
    created: stamp,
    updated: stamp,
  };
  if (spec.containerId !== undefined) item.containerId = spec.containerId;
  if (spec.evacuationTimeout !== undefined) item.evacuationTimeout = spec.evacuationTimeout;
  if (spec.source !== undefined) item.source = spec.source;
  return item;
}

export type MergeResult =
  | { outcome: 'merged'; item: BlockedItem }
  | { outcome: 'unchanged' }
  | { outcome: 'conflict'; conflict: Conflict };

/**
 * Merges `incoming` (a freshly built item for the same id) into `existing`.
 * - action: EVACUATE wins; the evacuation clock is not the merge's: each job's starts when its sync
 *   engine first has the item's node on that job's YARN blacklist (kept by the job, not in the
 *   item: src/sync/evacuation-starts.ts), and no merge moves it;
 * - endTimestamp: max (permanent wins);
 * - cause: the stored text with the request's new tokens appended, bounded (cause.ts); a merge
 *   that would leave no cause at all is refused (`empty-cause`);
 * - startTimestamp, the creation stamp and the source: the original's (the source names who
 *   created the block; a merge adds to a block, it does not change who made it);
 * - evacuationTimeout: the newer value when given (each job's deadline still counts from its start);
 * - scope: the union of both (scope.ts): two jobs' blocks of one node become one block for both;
 *   cluster covers all. A request that named no scope (`keepScope`: FLIP-224's body has no such
 *   field) keeps the stored one: extending one job's block must not blacklist the node for every job.
 * A merge that changes nothing is `unchanged`: the existing item stays as it is (not even its
 * updated stamp moves), so nothing downstream fires.
 */
export function mergeItems(existing: BlockedItem, incoming: BlockedItem, keepScope = false): MergeResult {
  const scope = keepScope ? { ok: true as const, scope: existing.scope } : unionScopes(existing.scope, incoming.scope);
  if (!scope.ok) return { outcome: 'conflict', conflict: { code: 'scope-full', message: `'${existing.id}': ${scope.message}` } };
  const cause = mergeCauses(existing.cause, incoming.cause);
  if (causeTokens(cause).length === 0) {
    return { outcome: 'conflict', conflict: { code: 'empty-cause', message: `'${existing.id}': the merged block would have no cause; send a cause with some text` } };
  }
  const action = existing.action === EVACUATE || incoming.action === EVACUATE ? EVACUATE : existing.action;
  const merged: BlockedItem = {
    ...existing,
    action,
    endTimestamp: Math.max(existing.endTimestamp, incoming.endTimestamp),
    cause,
    scope: scope.scope,
  };
  if (incoming.evacuationTimeout !== undefined) merged.evacuationTimeout = incoming.evacuationTimeout;
  if (sameState(existing, merged)) return { outcome: 'unchanged' };
  merged.updated = { ...incoming.created };
  return { outcome: 'merged', item: merged };
}
