/**
 * Creating an item and merging a new request into an existing one (FLIP-224 rules, design §3).
 * Flink's shipped DefaultBlocklistTracker replaces the whole record when the new end is later and
 * drops it otherwise; we follow the FLIP instead: EVACUATE wins, max end, causes joined.
 */
import { BlockedItem, EVACUATE, CLUSTER_SCOPE, sameState, Stamp } from './item';
import type { Conflict } from './decide';
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
  if (spec.action === EVACUATE) item.evacuationSince = now;
  return item;
}

/** Cause tokens joined with ',', de-duplicated, first-seen order: "a,b" + "c,a" = "a,b,c". */
export function mergeCauses(a: string, b: string): string {
  const seen = new Set<string>();
  for (const tok of `${a},${b}`.split(',')) {
    const t = tok.trim();
    if (t) seen.add(t);
  }
  return [...seen].join(',');
}

export type MergeResult =
  | { outcome: 'merged'; item: BlockedItem }
  | { outcome: 'unchanged' }
  | { outcome: 'conflict'; conflict: Conflict };

/**
 * Merges `incoming` (a freshly built item for the same id) into `existing`.
 * - action: EVACUATE wins; the evacuation clock starts when the item first asks for it;
 * - endTimestamp: max (permanent wins);
 * - cause: mergeCauses;
 * - startTimestamp and the creation stamp: the original's;
 * - evacuationTimeout: the newer value when given (the deadline still counts from evacuationSince);
 * - scope: equal stays; cluster ∪ app = cluster; two different apps cannot be expressed as one
 *   item, so that is a conflict even with allowMerge.
 * A merge that changes nothing is `unchanged`: the existing item stays as it is (not even its
 * updated stamp moves), so nothing downstream fires.
 */
export function mergeItems(existing: BlockedItem, incoming: BlockedItem): MergeResult {
  let scope = existing.scope;
  if (incoming.scope !== existing.scope) {
    if (existing.scope === CLUSTER_SCOPE || incoming.scope === CLUSTER_SCOPE) scope = CLUSTER_SCOPE;
    else {
      return {
        outcome: 'conflict',
        conflict: {
          code: 'scope',
          message: `'${existing.id}' is blocked with scope ${existing.scope}; a block for ${incoming.scope} cannot merge into it (use scope 'cluster' or remove it first)`,
        },
      };
    }
  }
  const action = existing.action === EVACUATE || incoming.action === EVACUATE ? EVACUATE : existing.action;
  const merged: BlockedItem = {
    ...existing,
    action,
    endTimestamp: Math.max(existing.endTimestamp, incoming.endTimestamp),
    cause: mergeCauses(existing.cause, incoming.cause),
    scope,
  };
  if (incoming.evacuationTimeout !== undefined) merged.evacuationTimeout = incoming.evacuationTimeout;
  if (action === EVACUATE && existing.evacuationSince === undefined) merged.evacuationSince = incoming.created.at;
  if (sameState(existing, merged)) return { outcome: 'unchanged' };
  merged.updated = { ...incoming.created };
  return { outcome: 'merged', item: merged };
}
