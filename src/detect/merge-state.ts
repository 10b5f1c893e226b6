/**
 * Two detector states of one job into one, pure. Two sidecars of one job (an HA pair, or the old
 * and the new one while a restart overlaps) keep one state record in the store; each runs its own
 * detector and writes the record with a compare-and-set. When the record changed since a sidecar
 * read it, it reads it again, merges what it has with what the store has, and tries again — so
 * neither sidecar's update (an incident, a block and its backoff level, an operator's unblock) is
 * lost to the other's write.
 *
 * The merge keeps every fact either side knows, and is idempotent (merging a state with itself, or
 * with a state already merged into it, changes nothing): a compare-and-set whose reply was lost and
 * that was applied finds its own text on the re-read, and writes nothing more.
 */
import { AutoBlock, DetectorState, HostState, JsonValue } from './state';
import { Incident, IncidentFailure } from './types';

/** Failures kept per incident, as ingest keeps them. */
const FAILURES_PER_INCIDENT = 8;

/**
 * `mine` is the writer's own state, `theirs` what the store holds. Facts of both sides are kept;
 * what is only the writer's own business (its sources' cursors — each sidecar reads the sources
 * itself — and its per-process metric memory) is the writer's.
 */
export function mergeStates(mine: DetectorState, theirs: DetectorState): DetectorState {
  const out: DetectorState = {
    version: 1,
    incidents: mergeIncidents(theirs.incidents, mine.incidents),
    seen: { ...theirs.seen },
    hosts: {},
    health: { ...theirs.health },
    cursors: mergeCursors(mine.cursors, theirs.cursors),
    lastDecisions: { ...mine.lastDecisions },
  };
  // Who runs the detector is what the store says: a lease changes hands only by its own
  // compare-and-set (leadership.ts), never by a merge bringing back one a sidecar remembers.
  if (theirs.runner) out.runner = { ...theirs.runner };
  const touchedAt = maxDefined(mine.touchedAt, theirs.touchedAt);
  if (touchedAt !== undefined) out.touchedAt = touchedAt;
  for (const [k, at] of Object.entries(mine.seen)) out.seen[k] = out.seen[k] === undefined ? at : Math.min(out.seen[k], at);
  for (const [h, o] of Object.entries(mine.health)) {
    const t = out.health[h];
    if (!t || o.seenAt >= t.seenAt) out.health[h] = o;
  }
  for (const h of new Set([...Object.keys(theirs.hosts), ...Object.keys(mine.hosts)])) {
    out.hosts[h] = mergeHost(mine.hosts[h], theirs.hosts[h]);
  }
  return out;
}

function maxDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}

function mergeHost(a: HostState | undefined, b: HostState | undefined): HostState {
  if (!a) return structuredClone(b ?? {});
  if (!b) return structuredClone(a);
  const out: HostState = {};
  const lastBlock = laterBlock(a.lastBlock, b.lastBlock);
  if (lastBlock) out.lastBlock = lastBlock;
  const countAfter = maxDefined(a.countAfter, b.countAfter);
  if (countAfter !== undefined) out.countAfter = countAfter;
  const op = maxDefined(a.operatorUnblockedAt, b.operatorUnblockedAt);
  if (op !== undefined) out.operatorUnblockedAt = op;
  const ev = maxDefined(a.evacuatedAt, b.evacuatedAt);
  if (ev !== undefined) out.evacuatedAt = ev;
  const refused = !a.refusedJoin ? b.refusedJoin : !b.refusedJoin ? a.refusedJoin : a.refusedJoin.at >= b.refusedJoin.at ? a.refusedJoin : b.refusedJoin;
  if (refused) out.refusedJoin = { ...refused };
  return out;
}

/**
 * The host's latest automatic block: the later one (the higher backoff level when both began at
 * the same instant). Two views of one block (same start) keep what either saw: that it ended (and
 * how), the later end an item was extended to, and whether an operator took it over.
 */
function laterBlock(a: AutoBlock | undefined, b: AutoBlock | undefined): AutoBlock | undefined {
  if (!a || !b) return structuredClone(a ?? b);
  if (a.start !== b.start || a.itemId !== b.itemId || a.mode !== b.mode) {
    const later = a.start > b.start || (a.start === b.start && a.level >= b.level) ? a : b;
    return structuredClone(later);
  }
  const out: AutoBlock = structuredClone(a.level >= b.level ? a : b);
  out.level = Math.max(a.level, b.level);
  out.end = Math.max(a.end, b.end);
  const own = maxDefined(a.ownEnd, b.ownEnd);
  if (own !== undefined) out.ownEnd = own;
  const ended = a.endedAt !== undefined ? a : b.endedAt !== undefined ? b : undefined;
  if (ended) {
    out.endedAt = Math.min(a.endedAt ?? Infinity, b.endedAt ?? Infinity);
    // An operator's lift, seen by either side, wins over "expired": its incidents stay forgiven.
    out.endedBy = a.endedBy === 'operator' || b.endedBy === 'operator' ? 'operator' : ended.endedBy ?? 'expiry';
  } else {
    delete out.endedAt;
    delete out.endedBy;
  }
  // A reservation is confirmed once either side saw its item, and abandoned once either gave it up.
  if (!(a.pending && b.pending)) delete out.pending;
  if (a.abandoned || b.abandoned) {
    delete out.pending;
    out.abandoned = true;
    out.end = out.start;
    out.ownEnd = out.start;
  }
  const took = a.takenOverAt !== undefined && (b.takenOverAt === undefined || a.takenOverAt <= b.takenOverAt) ? a : b.takenOverAt !== undefined ? b : undefined;
  if (took) {
    out.takenOverAt = took.takenOverAt;
    if (took.takenOverBy !== undefined) out.takenOverBy = took.takenOverBy;
  } else {
    delete out.takenOverAt;
    delete out.takenOverBy;
  }
  return out;
}

/**
 * Both sides read the same failures from the same job (keys and groups are the job's, not the
 * sidecar's), so one failure makes an incident on each side: incidents of one host that share a
 * group or a failure key are one, with the failures, groups, containers and sources of both.
 */
function mergeIncidents(base: readonly Incident[], more: readonly Incident[]): Incident[] {
  const out = base.map((i) => structuredClone(i));
  for (const inc of more) {
    const keys = new Set(inc.failures.map((f) => f.key));
    const same = out.find((o) => o.host === inc.host && (o.groups.some((g) => inc.groups.includes(g)) || o.failures.some((f) => keys.has(f.key))));
    if (!same) {
      out.push(structuredClone(inc));
      continue;
    }
    same.at = Math.min(same.at, inc.at);
    for (const g of inc.groups) if (!same.groups.includes(g)) same.groups.push(g);
    for (const c of inc.containerIds) if (!same.containerIds.includes(c)) same.containerIds.push(c);
    for (const s of inc.sources) if (!same.sources.includes(s)) same.sources.push(s);
    const have = new Set(same.failures.map((f) => f.key));
    for (const f of inc.failures) {
      if (same.failures.length >= FAILURES_PER_INCIDENT) break;
      if (!have.has(f.key)) same.failures.push({ ...f } as IncidentFailure);
    }
  }
  return out;
}

/**
 * Each sidecar reads the sources itself, so each keeps its own place in them. A cursor of the
 * other side is taken only for a source this one has none for (a sidecar that has not read it
 * yet): its failures are in the merged incidents and remembered keys, so none is lost or counted
 * twice either way.
 */
function mergeCursors(mine: Record<string, JsonValue>, theirs: Record<string, JsonValue>): Record<string, JsonValue> {
  return { ...structuredClone(theirs), ...structuredClone(mine) };
}
