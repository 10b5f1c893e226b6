/**
 * The detector's own blocks over time, pure: notices that an automatic block expired, or that an
 * operator lifted it (its incidents are then forgiven: the host is not blocked again for them);
 * records a block made; the backoff of a host blocked again soon after its last block ended.
 */
import { BlockAction } from '../model/item';
import { AutoBlock, DetectorState, HostState } from './state';
import { spentUntil } from './incidents';
import { RESERVATION_MS, abandonReservation, backoffMemory, reservationLive } from './reservation';

/** The principal automatic blocks are written as (the item's created/updated `by`). */
export const DETECTOR_PRINCIPAL = 'detector';

/**
 * How far ahead of this sidecar's clock another sidecar's may be when its expiry job deletes an
 * item: a block gone no earlier than this before its end expired.
 */
export const EXPIRY_SKEW_MS = 30_000;

/**
 * How long the detector's own block lasted, by its own decision: the backoff's measure. An end an
 * operator extended to (a day, or permanent) is theirs, and does not make the detector's memory of
 * the block longer (a permanent extension, lifted, made every later block of the host double).
 */
export function ownDuration(b: AutoBlock): number {
  return Math.max(0, Math.min(b.ownEnd ?? b.end, b.end) - b.start);
}

/** An item in effect now, as the store has it. */
export interface EffectiveBlock {
  itemId: string;
  /** Who last changed it (the item's `updated.by`). */
  by: string;
  end: number;
  action: BlockAction;
}

/** What observeBlocks needs of a stored item. */
export interface StoredBlock {
  end: number;
  /** The item's `updated.by`. */
  updatedBy: string;
  /** Whether it is in force for this job (default true); another job's item is not our reservation's. */
  forJob?: boolean;
}

/**
 * The one rule of what counts against the automatic-block cap (the limit of automatic blocks in
 * force): the detector's own block, while it would be in force by the detector's decision alone.
 *  - an operator who lifted it, or shortened it (re-created it with an earlier end), frees the cap
 *    at once: it is not in force, or it is no longer the detector's;
 *  - an operator who extended it, merged a cause into it, or re-created it has taken it over: it is
 *    their block now, like any manual one, and never counts again (a later merge by another job's
 *    detector does not give it back);
 *  - a later end that another job's detector merged in does not lengthen it: it counts until the
 *    end this detector gave it;
 *  - shadow mode: the would-be block counts until its end, in shadow mode only;
 *  - a reservation (reservation.ts) whose item is not in the store yet counts while it is young:
 *    a sidecar of the job is adding that item now.
 */
export function holdsCap(b: AutoBlock | undefined, forJob: EffectiveBlock | undefined, mode: 'off' | 'shadow' | 'enforce', now: number): boolean {
  if (!b || b.endedAt !== undefined) return false;
  if (b.mode === 'shadow') return mode === 'shadow' && now < b.end;
  if (b.pending && !forJob) return reservationLive(b, now);
  if (b.takenOverAt !== undefined || !forJob || forJob.by !== DETECTOR_PRINCIPAL) return false;
  return now < Math.min(b.ownEnd ?? b.end, forJob.end);
}

/**
 * Brings each host's last automatic block up to date with the store: gone after its end = expired;
 * gone before its end = an operator lifted it, and the incidents so far are forgiven. Shadow blocks
 * live only in the detector's state and just expire.
 */
export function observeBlocks(state: DetectorState, itemOf: (itemId: string) => StoredBlock | undefined, now: number): { unblockedByOperator: string[] } {
  const unblockedByOperator: string[] = [];
  for (const [host, hs] of Object.entries(state.hosts)) {
    const b = hs.lastBlock;
    if (!b || b.endedAt !== undefined) continue;
    if (b.mode === 'shadow') {
      if (now >= b.end) {
        b.endedAt = b.end;
        b.endedBy = 'expiry';
      }
      continue;
    }
    const item = itemOf(b.itemId);
    if (b.pending) {
      // A reservation: its item, once in force for this job, makes it an ordinary block; without
      // it, a sidecar of the job is adding it now — or stopped before it could, and then the
      // reservation is abandoned once old (never taken for an operator's unblock).
      if (!item || item.forJob === false) {
        if (now >= b.start + RESERVATION_MS) abandonReservation(b);
        continue;
      }
      delete b.pending;
    }
    const end = item?.end;
    if (item && item.end > now) {
      // An operator (or another job's detector) may have extended it — to permanent, too: a
      // permanent item's end is Infinity in the program, which JSON writes as null; the record
      // kept null, and after a restart the block's end read as 0.
      b.end = Math.min(item.end, Number.MAX_SAFE_INTEGER);
      if (item.updatedBy !== DETECTOR_PRINCIPAL && b.takenOverAt === undefined) {
        b.takenOverAt = now;
        b.takenOverBy = item.updatedBy;
      }
      continue;
    }
    // Gone a little before its end is the expiry job of a sidecar whose clock is ahead of ours
    // (every sidecar sharing the store runs one), not an operator's unblock.
    if (end === undefined && now < b.end - EXPIRY_SKEW_MS) {
      b.endedAt = now;
      b.endedBy = 'operator';
      hs.countAfter = spentUntil(state, host, now);
      hs.operatorUnblockedAt = now;
      unblockedByOperator.push(host);
    } else {
      b.endedAt = Math.min(b.end, now);
      b.endedBy = 'expiry';
    }
  }
  return { unblockedByOperator };
}

/**
 * Failures on a blocked host do not count against it again: while a block is in force for this
 * job — anyone's (an operator's too), or in shadow mode our own would-be block — every incident
 * known for the host is spent. Otherwise the failures a host had under an operator's block counted
 * the moment the operator lifted it, and the detector blocked the host they had just repaired.
 * Only hosts with incidents are touched (the state does not grow with the blocklist).
 */
export function consumeWhileBlocked(state: DetectorState, blocked: Iterable<string>, mode: 'off' | 'shadow' | 'enforce', now: number): void {
  const withIncidents = new Set(state.incidents.map((i) => i.host));
  const hosts = new Set<string>();
  for (const h of blocked) if (withIncidents.has(h)) hosts.add(h);
  if (mode === 'shadow') {
    for (const [h, hs] of Object.entries(state.hosts)) {
      const b = hs.lastBlock;
      if (b?.mode === 'shadow' && b.endedAt === undefined && b.end > now && withIncidents.has(h)) hosts.add(h);
    }
  }
  for (const host of hosts) (state.hosts[host] ??= {}).countAfter = spentUntil(state, host, now);
}

/** What recordBlock needs of a planned block (decide.ts's PlannedBlock). */
export interface BlockMade {
  host: string;
  itemId: string;
  end: number;
  level: number;
}

/** Records a block the runner made (enforce) or would have made (shadow). */
export function recordBlock(state: DetectorState, planned: BlockMade, mode: 'enforce' | 'shadow', now: number): void {
  const hs: HostState = state.hosts[planned.host] ?? (state.hosts[planned.host] = {});
  hs.lastBlock = { itemId: planned.itemId, start: now, end: planned.end, ownEnd: planned.end, level: planned.level, mode };
  hs.countAfter = spentUntil(state, planned.host, now);
}

/** Backoff: a host blocked again within as long as its last block lasted gets twice as long, up to the maximum. */
export function nextBlock(lastBlock: AutoBlock | undefined, now: number, s: { blockDurationMs: number; maxBlockDurationMs: number }): { level: number; durationMs: number } {
  const last = lastBlock && backoffMemory(lastBlock);
  let level = 0;
  if (last && last.endedAt !== undefined && now - last.endedAt <= ownDuration(last)) level = last.level + 1;
  const durationMs = Math.min(s.maxBlockDurationMs, s.blockDurationMs * 2 ** Math.min(level, 30));
  // Once at the maximum, the level stops growing (it only says "how many doublings").
  while (level > 0 && s.blockDurationMs * 2 ** (level - 1) >= s.maxBlockDurationMs) level--;
  return { level, durationMs };
}

/**
 * Drops the entries of hosts the detector has nothing left to remember about: no incident in the
 * window, no block of ours in force or recent enough to double the next one, no "counted after"
 * mark or operator's unblock still inside the window, no early evacuation running. Without it the
 * record kept an entry for every host that ever failed under a block or was ever blocked — on a
 * big cluster over weeks, a record past ZooKeeper's 1 MB znode limit (jute.maxbuffer), whose
 * every write then fails.
 */
export function forgetSettled(state: DetectorState, now: number, windowMs: number): void {
  const withIncidents = new Set(state.incidents.map((i) => i.host));
  const from = now - windowMs;
  for (const [host, hs] of Object.entries(state.hosts)) {
    if (withIncidents.has(host) || hs.evacuatedAt !== undefined) continue;
    if ((hs.countAfter ?? -Infinity) > from || (hs.operatorUnblockedAt ?? -Infinity) > from) continue;
    const b = hs.lastBlock && backoffMemory(hs.lastBlock);
    if (hs.lastBlock?.endedAt === undefined && hs.lastBlock !== undefined) continue;
    if (b && (b.endedAt === undefined || now - b.endedAt <= ownDuration(b))) continue;
    delete state.hosts[host];
  }
}

/**
 * The `source` of the items the detector creates (model/item.ts: what created the block): an
 * automatic block for failures (counted against the cap), or an early evacuation of a node YARN is
 * decommissioning (outside the cap). Kept by every merge.
 */
export const SOURCE_FAILURES = 'detector:failures';
export const SOURCE_DECOMMISSIONING = 'detector:decommissioning';

/** An item in force for this job, as adoptOrphans needs it. */
export interface JobItem {
  host: string;
  itemId: string;
  createdBy: string;
  createdAt: number;
  end: number;
  source?: string;
}

/**
 * The detector's own items its state does not know: the block was added, and the sidecar stopped
 * (or its state write failed, and then it stopped) before the state was written. Without this the
 * restarted detector did not count such a block against its cap — it could block past it — did
 * not notice an operator lifting it, and forgot its backoff. Adopted as the detector's block from
 * the item: its creation, its end, the backoff level its length shows. A block the state knows, or
 * an item made before the state's last block of the host ended, is left alone.
 */
export function adoptOrphans(state: DetectorState, items: Iterable<JobItem>, s: { blockDurationMs: number; maxBlockDurationMs: number }): string[] {
  const adopted: string[] = [];
  for (const it of items) {
    // An early evacuation is outside the cap: never adopted as a block for failures.
    if (it.createdBy !== DETECTOR_PRINCIPAL || it.source === SOURCE_DECOMMISSIONING || state.hosts[it.host]?.evacuatedAt !== undefined) continue;
    const b = state.hosts[it.host]?.lastBlock;
    if (b && (b.endedAt === undefined || it.createdAt <= b.endedAt)) continue;
    const end = Math.min(it.end, Number.MAX_SAFE_INTEGER);
    let level = 0;
    while (level < 30 && s.blockDurationMs * 2 ** (level + 1) <= Math.min(end - it.createdAt, s.maxBlockDurationMs)) level++;
    (state.hosts[it.host] ??= {}).lastBlock = { itemId: it.itemId, start: it.createdAt, end, ownEnd: end, level, mode: 'enforce' };
    adopted.push(it.host);
  }
  return adopted;
}
