/**
 * Dry-run previews: what a mutation would change in YARN, computed without writing anything.
 * The effect on YARN is the change in the *effective* node set for this app (what the reconciler
 * would push), and the containers an EVACUATE item would (eventually) release.
 * The safety cap is not simulated here: a previewed addition may end up deferred.
 */
import { BlockedItem, EVACUATE } from '../model/item';
import { appliesTo, isEffective } from '../model/effective';

export interface DryRunEffect {
  blacklistAdditions: string[];
  blacklistRemovals: string[];
  containersToRelease: string[];
}

function blockedNodes(items: Iterable<BlockedItem>, app: string | undefined, now: number): Set<string> {
  const s = new Set<string>();
  for (const it of items) if (it.kind === 'node' && appliesTo(it, app) && isEffective(it, now)) s.add(it.node);
  return s;
}

function evacuating(item: BlockedItem | undefined, app: string | undefined, now: number): boolean {
  return !!item && item.action === EVACUATE && appliesTo(item, app) && isEffective(item, now);
}

/**
 * `before` is the current item set; `change` replaces (item) or removes (undefined) one id.
 * `containersOn(node)` gives the app's live containers on a node.
 */
export function previewChange(
  before: BlockedItem[],
  id: string,
  after: BlockedItem | undefined,
  app: string | undefined,
  now: number,
  containersOn: (node: string) => string[],
): DryRunEffect {
  const old = before.find((x) => x.id === id);
  const next = before.filter((x) => x.id !== id);
  if (after) next.push(after);
  const a = blockedNodes(before, app, now);
  const b = blockedNodes(next, app, now);
  const releases: string[] = [];
  if (after && evacuating(after, app, now) && !evacuating(old, app, now)) {
    if (after.kind === 'node') releases.push(...containersOn(after.node));
    else if (after.containerId && containersOn(after.node).includes(after.containerId)) releases.push(after.containerId);
  }
  return {
    blacklistAdditions: [...b].filter((n) => !a.has(n)).sort(),
    blacklistRemovals: [...a].filter((n) => !b.has(n)).sort(),
    containersToRelease: releases.sort(),
  };
}
