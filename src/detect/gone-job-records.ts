/**
 * Removes the detector state records (`detector.<application id>`, state-record.ts) of jobs that
 * are gone. Every job's detector leaves its record behind when its application ends (nothing tells
 * a sidecar that this stop is its job's last), so on a cluster that runs a thousand jobs a day the
 * records grew without end — on ZooKeeper, in every server's memory. A running job's detector
 * writes its record at least daily (touchedAt); one nobody wrote for FORGET_AFTER_MS is removed,
 * by a compare-and-set delete, so a job that writes it meanwhile keeps it. Records of an older
 * format (no touchedAt) are left alone. Best effort.
 *
 * Run by the sidecar's sync engine next to its clean-up of evacuation start records, not by the
 * detector: who looks is the cluster's elected sidecar (core/sweep-schedule.ts), which may run no
 * detector itself, or stand by while the other sidecar of its job runs it (leadership.ts).
 */
import { Logger } from '../core/logger';
import { SweepSchedule } from '../core/sweep-schedule';
import { decodeState } from './state';
import { RECORD_PREFIX, RecordStore, stateKeyOf } from './state-record';

const DAY_MS = 24 * 3_600_000;
/** A record no detector wrote for this long belongs to a job that is gone. */
const FORGET_AFTER_MS = 7 * DAY_MS;
/** Records removed in one look at most (the rest next time), so a backlog never makes a long pass. */
const COLLECT_MAX = 1_000;

export class GoneStates {
  private readonly sweeps: SweepSchedule;

  constructor(
    private readonly deps: {
      store: RecordStore;
      logger: Logger;
      /** Whether this sidecar is the cluster's elected sweeper now; absent: every sidecar looks. */
      sweeper?: () => boolean;
    },
  ) {
    this.sweeps = new SweepSchedule(deps.sweeper ? { sweeper: deps.sweeper } : {});
  }

  /** Looks when it is this sidecar's time (once a day); the number of records removed. */
  async collect(ownApplicationId: string, now: number): Promise<number> {
    const { store, logger } = this.deps;
    const { recordKeys, removeRecord, readRecord } = store;
    if (!recordKeys || !removeRecord || !readRecord) return 0;
    if (!this.sweeps.due(ownApplicationId, now)) return 0;
    const own = stateKeyOf(ownApplicationId);
    let removed = 0;
    try {
      for (const key of await recordKeys.call(store, RECORD_PREFIX)) {
        if (key === own) continue;
        const text = await readRecord.call(store, key);
        if (text === undefined) continue;
        const { state, problem } = decodeState(text);
        if (problem || state.touchedAt === undefined || now - state.touchedAt < FORGET_AFTER_MS) continue;
        if (await removeRecord.call(store, key, text)) removed++;
        if (removed >= COLLECT_MAX) break;
      }
    } catch (e) {
      logger.warn(`detector: looking for the records of jobs that are gone failed (tried again in a day): ${(e as Error).message}`);
    }
    if (removed > 0) logger.info(`detector: removed the state records of ${removed} job(s) no detector wrote for ${FORGET_AFTER_MS / DAY_MS} days`);
    return removed;
  }
}
