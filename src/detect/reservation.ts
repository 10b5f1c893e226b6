/**
 * Reserving a cap slot before the block is written, pure. Two sidecars of one job (an HA pair, or
 * the old and the new one while a restart overlaps) share the detector's state record; each
 * decided from the record as it read it, so when their passes coincided each saw the cap with one
 * slot free and each took it — the pair held one block per extra sidecar over the cap. Now a
 * detector writes the blocks it is about to make into the record first, by compare-and-set against
 * the text it decided from (state-record.ts#commit), and adds the items only once that write won.
 * A sidecar whose write lost reads the record again — with the other's reservation in it — and
 * decides again. So whatever the timing, the blocks in force are at most the cap.
 *
 * A reservation is an AutoBlock marked `pending` until its item is seen in the store. One whose
 * item never comes (the store refused it, the write failed, or the sidecar stopped in between)
 * is abandoned: by the sidecar itself at once, or by any sidecar of the job after RESERVATION_MS.
 * Until then it holds its slot — a sidecar dying mid-pass costs a slot for two minutes at most,
 * never a block over the cap.
 */
import { AutoBlock, DetectorState } from './state';

/**
 * How long a reservation without its item holds its cap slot. Adding an item is one store write
 * (bounded by the store's operation timeout: seconds); two minutes leave room for a slow store and
 * for the sidecars' clocks being apart by up to 30 s.
 */
export const RESERVATION_MS = 120_000;

/**
 * How long after it was made a reservation may still be used: its item is added only before this.
 * Another sidecar of the job abandons it once RESERVATION_MS old on its own clock (up to 30 s
 * ahead of ours) and gives the slot to another block; an item added later than that would be a
 * block over the cap. Half its life leaves a minute for the add itself (one store write, bounded
 * by the store's operation timeout) and for the clocks' difference. A sidecar that stalled past it
 * (a store that stopped answering for a while, a long pause) gives the reservation up instead,
 * and the next pass decides again.
 */
export const RESERVATION_USE_MS = RESERVATION_MS / 2;

/** What a reservation needs of a planned block (decide.ts's PlannedBlock). */
export interface Reserved {
  host: string;
  itemId: string;
  end: number;
  level: number;
}

/**
 * Writes the block about to be made into the state, pending; the host's previous block is kept
 * beside it. `by`: the sidecar making it (its name in the lease).
 */
export function reserveBlock(state: DetectorState, planned: Reserved, now: number, by?: string): void {
  const hs = state.hosts[planned.host] ?? (state.hosts[planned.host] = {});
  const prev = hs.lastBlock ? backoffMemory(hs.lastBlock) : undefined;
  const b: AutoBlock = { itemId: planned.itemId, start: now, end: planned.end, ownEnd: planned.end, level: planned.level, mode: 'enforce', pending: true };
  if (by !== undefined) b.by = by;
  if (prev) {
    // One block back is all the backoff reads: reservations do not nest.
    b.before = { ...prev };
    delete b.before.before;
  }
  hs.lastBlock = b;
}

/** The reservation came to nothing: no block, no slot, and the backoff remembers the block before it. */
export function abandonReservation(b: AutoBlock): void {
  delete b.pending;
  b.abandoned = true;
  b.end = b.start;
  b.ownEnd = b.start;
  b.endedAt = b.start;
  b.endedBy = 'expiry';
}

/** Whether a pending reservation without its item still holds its slot at `now`. */
export function reservationLive(b: AutoBlock, now: number): boolean {
  return b.pending === true && b.endedAt === undefined && now < b.start + RESERVATION_MS;
}

/** The block the backoff measures: an abandoned reservation's is the one before it. */
export function backoffMemory(b: AutoBlock): AutoBlock | undefined {
  return b.abandoned ? b.before : b;
}

/** Whether the item of a reservation made at `start` may still be added at `now` (RESERVATION_USE_MS). */
export function reservationUsable(b: AutoBlock, now: number): boolean {
  return b.pending === true && b.endedAt === undefined && now < b.start + RESERVATION_USE_MS;
}

/**
 * Gives up the reservations `by` made whose item is not in force for the job, at the start of a
 * decision: a pass decides before it adds, and passes do not overlap, so such a reservation is
 * an earlier pass's that never added its item — one whose reservation write was applied although
 * the call failed (a ZooKeeper session that expired before the answer), the pass failing with it.
 * Held as if another sidecar were adding it, its slot stayed taken and its host unblocked for
 * RESERVATION_MS. `inForce`: whether the item is in force for this job.
 */
export function abandonOwnLeftovers(state: DetectorState, by: string, inForce: (itemId: string) => boolean): void {
  for (const hs of Object.values(state.hosts)) {
    const b = hs.lastBlock;
    if (b?.pending && b.by === by && b.endedAt === undefined && !inForce(b.itemId)) abandonReservation(b);
  }
}
