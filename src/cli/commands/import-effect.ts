/**
 * What an import would do to YARN (its dry run), computed on the client from the batch's dry-run
 * results and the current list, with the sidecar's safety cap applied as its engine last applied
 * it: the same preview the sidecar gives for one item (src/sync/blacklist-effect.ts).
 */
import { ApiItem, BatchResult, DryRunEffect, SidecarStatus } from '../client';
import { CapBasis, previewCap } from '../../sync/blacklist-effect';
import { wireMs } from '../format';
import { BlockedItem, EVACUATE } from '../../model/item';
import { scopeCovers } from '../../model/scope';

/** An item as the server sent it, in the model's shape (what the cap's plan reads). */
function fromWire(it: ApiItem): BlockedItem {
  const slash = it.id.indexOf('/');
  const at = wireMs(it.startTimestamp);
  const out: BlockedItem = {
    id: it.id,
    kind: it.kind,
    node: it.kind === 'taskmanager' && slash > 0 ? it.id.slice(0, slash) : it.id,
    action: it.action as BlockedItem['action'],
    startTimestamp: at,
    endTimestamp: wireMs(it.endTimestamp),
    cause: it.cause,
    scope: it.scope,
    created: { by: it.createdBy ?? '', from: it.createdFrom ?? '', at },
    updated: { by: it.updatedBy ?? '', from: it.updatedFrom ?? '', at },
  };
  if (it.kind === 'taskmanager' && slash > 0) out.containerId = it.id.slice(slash + 1);
  return out;
}

/**
 * What the import would do to YARN, from the dry-run results and the current list, with the safety
 * cap applied as the sidecar's engine last applied it (src/sync/blacklist-effect.ts): what the cap would
 * hold back is `deferred`, not an addition, and an EVACUATE item held back releases nothing.
 */
export function importEffect(results: BatchResult[], current: Record<string, ApiItem>, app: string | undefined, cap: CapBasis | undefined, now: number, lifted: ApiItem[]): DryRunEffect {
  const before = Object.values(current).map(fromWire);
  const after = new Map(before.map((i) => [i.id, i]));
  for (const r of results) if (r.item) after.set(r.item.id, fromWire(r.item));
  for (const it of lifted) after.delete(it.id);
  const p = previewCap(before, [...after.values()], app, now, cap);
  const releases = new Set<string>();
  for (const r of results) {
    const it = r.item;
    if (!it || !scopeCovers(it.scope, app) || !p.enforced.has(it.id)) continue;
    const was = current[it.id];
    if (it.action === EVACUATE && was?.action !== EVACUATE) for (const c of it.taskManagers ?? []) releases.add(c);
  }
  return { blacklistAdditions: p.blacklistAdditions, blacklistRemovals: p.blacklistRemovals, containersToRelease: [...releases].sort(), deferred: p.deferred };
}

/** The running sidecar's cap basis (its nodes and remembered denominator), when it has an engine. */
export function capOf(s: SidecarStatus): CapBasis | undefined {
  if (!s.safetyCap || !s.nodes) return undefined;
  return { nodes: s.nodes.list, runningNodesFloor: s.safetyCap.runningNodes, maxBlockedFraction: s.safetyCap.maxBlockedFraction };
}
