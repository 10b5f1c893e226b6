/**
 * Which jobs an item applies to. On the wire and in the stores a scope is one string:
 *   `cluster`                                   every job sharing the store;
 *   `application_1652313600000_0001`            one job (the form older clients know);
 *   `application_…_0001,application_…_0002`     several jobs: their ids joined with ',' (no spaces),
 *                                               first-seen order, each at most once.
 * A comma-joined string rather than a JSON list keeps `scope` a string for every reader that knew
 * the single-job form; a reader asks scopeCovers() instead of comparing strings.
 * Merging two blocks of one node unites their scopes (a cluster scope covers all).
 */
import { CLUSTER_SCOPE, Scope } from './item';

/** Most jobs one scope names; a block for more than this many jobs is a cluster block. */
export const SCOPE_APPS_MAX = 64;

/** The application ids a scope names, or 'cluster'. */
export function scopeApps(scope: Scope): string[] | typeof CLUSTER_SCOPE {
  if (scope === CLUSTER_SCOPE) return CLUSTER_SCOPE;
  return scope.split(',');
}

/** Whether a block with this scope applies to the application (undefined: no application known). */
export function scopeCovers(scope: Scope, applicationId: string | undefined): boolean {
  if (scope === CLUSTER_SCOPE) return true;
  if (applicationId === undefined) return false;
  // Fast path for the one-job form, the common case on hot paths (every item of every pass).
  return scope === applicationId || (scope.includes(',') && scope.split(',').includes(applicationId));
}

/**
 * The list filter `?scope=`: `cluster` matches cluster blocks; an application id matches the
 * blocks whose scope names it (a block for several jobs is listed under each of them).
 */
export function scopeMatches(scope: Scope, filter: string): boolean {
  if (filter === CLUSTER_SCOPE) return scope === CLUSTER_SCOPE;
  return scope !== CLUSTER_SCOPE && scopeCovers(scope, filter);
}

export function formatScope(apps: readonly string[]): Scope {
  return apps.length === 0 ? CLUSTER_SCOPE : [...new Set(apps)].join(',');
}

export type ScopeUnion = { ok: true; scope: Scope } | { ok: false; message: string };

/** The scope of a merged block: both jobs' sets together; cluster if either is cluster. */
export function unionScopes(a: Scope, b: Scope): ScopeUnion {
  const aa = scopeApps(a);
  const bb = scopeApps(b);
  if (aa === CLUSTER_SCOPE || bb === CLUSTER_SCOPE) return { ok: true, scope: CLUSTER_SCOPE };
  const all = [...new Set([...aa, ...bb])];
  if (all.length > SCOPE_APPS_MAX) {
    return { ok: false, message: `the merged block would name ${all.length} applications (at most ${SCOPE_APPS_MAX}); block it with scope 'cluster' instead` };
  }
  // Unchanged text when b adds no job: the stored scope is not rewritten.
  return { ok: true, scope: all.length === aa.length ? a : all.join(',') };
}
