/**
 * Dry-run previews: what a mutation would change in YARN, computed without writing anything.
 * The effect on YARN is the change in the blacklist the reconcile pass would push, with the safety
 * cap applied as the engine last applied it (src/sync/blacklist-effect.ts): a block the cap would hold back
 * is reported in `deferred`, not as an addition, and an EVACUATE item held back releases nothing.
 */
import { BlockedItem, EVACUATE } from '../model/item';
import { appliesTo, isEffective } from '../model/effective';
import { CapBasis, previewCap } from '../sync/blacklist-effect';

export interface DryRunEffect {
  blacklistAdditions: string[];
  blacklistRemovals: string[];
  containersToRelease: string[];
  /** Items the safety cap would hold back (stored, not blacklisted, not evacuating). */
  deferred: string[];
  /** Present when the app's containers are not known: `containersToRelease` cannot be told, and why. */
  containersUnknown?: string;
}

function evacuating(item: BlockedItem | undefined, app: string | undefined, now: number): boolean {
  return !!item && item.action === EVACUATE && appliesTo(item, app) && isEffective(item, now);
}

/**
 * `before` is the current item set; `change` replaces (item) or removes (undefined) one id.
 * `containersOn(node)` gives the app's live containers on a node (on every node of it, for a rack
 * path); `cap` is the engine's cap basis.
 */
export function previewChange(
  before: readonly BlockedItem[],
  id: string,
  after: BlockedItem | undefined,
  app: string | undefined,
  now: number,
  containersOn: (node: string) => string[],
  cap?: CapBasis,
): DryRunEffect {
  const old = before.find((x) => x.id === id);
  const next = before.filter((x) => x.id !== id);
  if (after) next.push(after);
  const p = previewCap(before, next, app, now, cap);
  const releases: string[] = [];
  if (after && p.enforced.has(after.id) && evacuating(after, app, now) && !evacuating(old, app, now)) {
    // A rack's `node` is its path: containersOn answers for every node of it.
    if (after.kind !== 'taskmanager') releases.push(...containersOn(after.node));
    else if (after.containerId && containersOn(after.node).includes(after.containerId)) releases.push(after.containerId);
  }
  return { blacklistAdditions: p.blacklistAdditions, blacklistRemovals: p.blacklistRemovals, containersToRelease: releases.sort(), deferred: p.deferred };
}
