/**
 * What a change to the blocklist would do to YARN's blacklist, with the safety cap applied exactly
 * as the reconcile pass applies it (planDesired): which hosts would be added or removed, and which
 * items the cap would hold back. Pure; the API's dry run and the CLI's `import --dry-run` call it,
 * so a preview reports the deferrals the real write then gets.
 */
import { BlockedItem } from '../model/item';
import { DesiredPlan, NodeView, planDesired } from './desired';
import { SyncView } from './view';

/** What the cap decided with at the last pass: the nodes, the remembered denominator, the fraction. */
export interface CapBasis {
  nodes: readonly NodeView[];
  runningNodesFloor: number;
  maxBlockedFraction: number;
}

/** The engine's cap as of its last pass; undefined before a pass read the nodes (or without an engine). */
export function capBasisOf(view: SyncView): CapBasis | undefined {
  if (!view.engine || !view.nodes || !view.plan) return undefined;
  return { nodes: view.nodes.list, runningNodesFloor: view.plan.capNodes, maxBlockedFraction: view.maxBlockedFraction };
}

export interface CapPreview {
  blacklistAdditions: string[];
  blacklistRemovals: string[];
  /** Items the cap would hold back after the change that it does not hold back now. */
  deferred: string[];
  /** Ids the plan after the change enforces (node items on the blacklist, and task manager items). */
  enforced: ReadonlySet<string>;
}

function plan(items: readonly BlockedItem[], applicationId: string | undefined, now: number, cap: CapBasis | undefined): DesiredPlan {
  // Without a cap basis (no engine, or no pass yet) nothing is known to hold anything back.
  const basis = cap ?? { nodes: [], runningNodesFloor: 0, maxBlockedFraction: 1 };
  return planDesired({ items, applicationId, now, nodes: basis.nodes, maxBlockedFraction: basis.maxBlockedFraction, runningNodesFloor: basis.runningNodesFloor });
}

export function previewCap(before: readonly BlockedItem[], after: readonly BlockedItem[], applicationId: string | undefined, now: number, cap: CapBasis | undefined): CapPreview {
  const a = plan(before, applicationId, now, cap);
  const b = plan(after, applicationId, now, cap);
  const had = new Set(a.blacklist);
  const has = new Set(b.blacklist);
  const wasDeferred = new Set(a.deferred.map((i) => i.id));
  return {
    blacklistAdditions: b.blacklist.filter((h) => !had.has(h)),
    blacklistRemovals: a.blacklist.filter((h) => !has.has(h)),
    deferred: b.deferred.map((i) => i.id).filter((id) => !wasDeferred.has(id)).sort(),
    enforced: new Set([...b.enforced, ...b.taskManagers].map((i) => i.id)),
  };
}
