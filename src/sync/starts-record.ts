/**
 * This job's evacuation starts, kept in the store's named record `evacuation.<applicationId>`
 * (the rules are evacuation-starts.ts's). Read once when the engine first knows its application,
 * written after a pass whose push went through when the starts changed (a new start, or the block
 * of one is gone). Only this job's sidecars write this record, so no other job's write can take a
 * start away; two sidecars of one job merge what they find before writing (read, union,
 * compare-and-set where the store has it), so neither loses the other's start.
 * A store without named records (a test double) keeps the starts in memory only.
 */
import { Logger } from '../core/logger';
import { SweepSchedule } from '../core/sweep-schedule';
import { BlockedItem } from '../model/item';
import { BlocklistStore } from '../store/store';
import { JobStart, JobStarts, STARTS_RECORD_PREFIX, decodeStarts, encodeStarts, encodeStartsInSteps, helpsNobody, liveBlocks, nextStarts, nextStartsInSteps, sameStarts, startsRecordKey, unionStarts } from './evacuation-starts';
import { inTurns } from './steps';
import { message } from './cache';

export type StartsWrite = { result: 'unchanged' } | { result: 'recorded'; count: number } | { result: 'failed'; error: string };

/** Most records one look removes (the rest wait for the next day, or another sidecar). */
const COLLECT_MAX = 1_000;
const EMPTY_TEXT = encodeStarts(new Map());

export class StartsRecord {
  private starts: Map<string, JobStart> = new Map();
  private loadedFor: string | undefined;
  private loaded = false;
  /** The text last read or written: equal to what `starts` encodes unless a write is due. */
  private savedText: string | undefined;
  /** The items the starts were last kept against (a new snapshot may have dropped a block). */
  private keptAgainst: readonly BlockedItem[] | undefined;
  /** When this sidecar looks for the records of jobs that are gone (core/sweep-schedule.ts). */
  private readonly sweeps: SweepSchedule;
  /** `starts` encoded (the record's text), computed once per value. */
  private cachedFor: Map<string, JobStart> | undefined;
  private cachedText = '';

  constructor(
    private readonly deps: {
      store: Pick<BlocklistStore, 'readRecord' | 'writeRecord' | 'replaceRecord' | 'recordKeys' | 'removeRecord'>;
      logger: Logger;
      /** Whether this sidecar is the cluster's elected sweeper now; absent: every sidecar sweeps. */
      sweeper?: () => boolean;
    },
  ) {
    this.sweeps = new SweepSchedule(deps.sweeper ? { sweeper: deps.sweeper } : {});
  }

  /** This job's starts as last read or recorded. */
  get value(): JobStarts {
    return this.starts;
  }

  /** Reads the record once per application id (a store failure throws: the pass fails and retries). */
  async load(applicationId: string | undefined): Promise<void> {
    if (this.loaded && this.loadedFor === applicationId) return;
    const read = this.deps.store.readRecord;
    if (applicationId !== undefined && read) {
      const text = await read.call(this.deps.store, startsRecordKey(applicationId));
      const { starts, problem } = decodeStarts(text);
      if (problem) this.deps.logger.warn(`evacuation: ${problem}`);
      this.starts = starts;
      // No record yet is the same as an empty one: nothing to write until a start is recorded.
      this.savedText = problem ? undefined : (text ?? encodeStarts(starts));
    }
    this.loaded = true;
    this.loadedFor = applicationId;
    this.keptAgainst = undefined;
  }

  /**
   * After a pass whose push went through: the starts of blocks still stored plus this pass's new
   * ones, written when that changes the record. A failed write keeps them in memory and is tried
   * again after the next pass (the pass itself does not fail: the blacklist is applied).
   */
  async record(items: readonly BlockedItem[], fresh: JobStarts): Promise<StartsWrite> {
    // Most passes of most jobs: nothing started, and nothing kept that a new snapshot could drop.
    if (fresh.size === 0 && (items === this.keptAgainst || this.starts.size === 0) && this.savedText === (await this.encoded())) return { result: 'unchanged' };
    // 10,000 starts are milliseconds of work each way: done with turns of the event loop between (steps.ts).
    const next = await inTurns(nextStartsInSteps(this.starts, items, fresh));
    this.keptAgainst = items;
    if (sameStarts(next, this.starts) && this.savedText === (await this.encoded())) return { result: 'unchanged' };
    this.starts = next;
    const key = this.loadedFor !== undefined ? startsRecordKey(this.loadedFor) : undefined;
    const { readRecord, writeRecord, replaceRecord } = this.deps.store;
    if (key === undefined || !readRecord || !writeRecord) {
      this.savedText = await this.encoded();
      return { result: 'recorded', count: next.size };
    }
    try {
      // Another sidecar of this job may have written since we read: keep its starts too, and
      // write only over the text we merged with (compare-and-set), or try again.
      for (let round = 0; round < 5; round++) {
        const text = await readRecord.call(this.deps.store, key);
        if (text !== undefined && text !== this.savedText) this.starts = nextStarts(unionStarts(this.starts, decodeStarts(text).starts), items, new Map());
        const out = await this.encoded();
        const { removeRecord } = this.deps.store;
        if (out === EMPTY_TEXT && removeRecord) {
          // No start left: no record is the same as an empty one, and leaves nothing behind.
          if (text !== undefined && !(await removeRecord.call(this.deps.store, key, text))) continue;
        } else if (out !== text) {
          if (!replaceRecord) await writeRecord.call(this.deps.store, key, out);
          else if (!(await replaceRecord.call(this.deps.store, key, text, out))) continue;
        }
        this.savedText = out;
        return { result: 'recorded', count: this.starts.size };
      }
      return { result: 'failed', error: "recording this job's evacuation starts kept racing another sidecar of the job" };
    } catch (e) {
      return { result: 'failed', error: `recording this job's evacuation starts failed: ${message(e)}` };
    }
  }

  /**
   * Removes the records of jobs that are gone: a job's record outlives its job (nothing tells a
   * sidecar that its stop is its job's last), and a cluster that runs a thousand jobs a day would
   * keep them all — on ZooKeeper, in every server's memory. A record is removed once every start
   * in it names a block that is gone (evacuation-starts.ts helpsNobody), by a compare-and-set
   * delete. Once a day per cluster when a sweeper is elected (the others only remove their own
   * record when it empties, in record()), else once a day per sidecar; best effort.
   */
  async collect(items: readonly BlockedItem[], now: number): Promise<number> {
    const { recordKeys, readRecord, removeRecord } = this.deps.store;
    const own = this.loadedFor;
    if (own === undefined || !recordKeys || !readRecord || !removeRecord) return 0;
    if (!this.sweeps.due(own, now)) return 0;
    const live = liveBlocks(items);
    const ownKey = startsRecordKey(own);
    let removed = 0;
    try {
      for (const key of await recordKeys.call(this.deps.store, STARTS_RECORD_PREFIX)) {
        if (key === ownKey) continue;
        const text = await readRecord.call(this.deps.store, key);
        if (text === undefined) continue;
        const { starts, problem } = decodeStarts(text);
        if (problem || !helpsNobody(starts, live, now)) continue;
        if (await removeRecord.call(this.deps.store, key, text)) removed++;
        if (removed >= COLLECT_MAX) break;
      }
    } catch (e) {
      this.deps.logger.warn(`evacuation: looking for the start records of jobs that are gone failed (tried again in a day): ${message(e)}`);
    }
    if (removed > 0) this.deps.logger.info(`evacuation: removed the start records of ${removed} job(s) whose blocks are all gone`);
    return removed;
  }

  private async encoded(): Promise<string> {
    const starts = this.starts;
    if (this.cachedFor !== starts) {
      const text = await inTurns(encodeStartsInSteps(starts));
      // Kept for the starts it encodes (record() may have moved on meanwhile).
      this.cachedFor = starts;
      this.cachedText = text;
    }
    return this.cachedText;
  }
}
