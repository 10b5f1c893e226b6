/**
 * The detector's state and its record in the store (`detector.<application id>`): read at the
 * start of every pass and merged with what another sidecar of the job wrote, written back by
 * compare-and-set when it changed (at least daily); gone-job-records.ts removes those of jobs that are gone.
 * The detector (detector.ts) decides; this keeps what it decides from and about, shared safely.
 */
import { Clock } from '../core/clock';
import { Logger } from '../core/logger';
import { BlocklistStore } from '../store/store';
import { DetectorState, decodeState, emptyState, encodeState } from './state';
import { mergeStates } from './merge-state';

/** Compare-and-set rounds of one save before it waits for the next pass. */
const SAVE_ROUNDS = 5;
const DAY_MS = 24 * 3_600_000;
/** A quiet job's detector still writes its record this often (DetectorState.touchedAt). */
const TOUCH_EVERY_MS = DAY_MS;
/** The records' keys: the prefix, then the application id. */
export const RECORD_PREFIX = 'detector.';

/** The record's key for an application. */
export function stateKeyOf(applicationId: string): string {
  return `${RECORD_PREFIX}${applicationId}`;
}

/** What the record needs of the store (a store without records keeps the state in memory only). */
export type RecordStore = Partial<Pick<BlocklistStore, 'readRecord' | 'writeRecord' | 'replaceRecord' | 'recordKeys' | 'removeRecord'>>;

export class StateRecord {
  state: DetectorState = emptyState();
  private loaded = false;
  /**
   * The record's text as this sidecar last read or wrote it: a quiet pass writes nothing, and it is
   * what the compare-and-set expects to find (another writer's change is merged, not overwritten).
   */
  private savedText: string | undefined;
  /** The stored text a standby last took as its state (followStored). */
  private followedText: string | undefined;

  constructor(
    private readonly store: RecordStore,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** The record's key; undefined until the application is known. */
    private readonly key: () => string | undefined,
  ) {}

  /**
   * The state record, at the start of every pass. Two sidecars of one job (an HA pair, a restart
   * overlap) share it: what the other wrote since this one last read or wrote it is merged in
   * (merge-state.ts) before this one decides, so it does not decide — and block, and back off — on
   * a stale view. A store without compare-and-set is read once, at start. A failed re-read is not
   * fatal: the pass goes on with what this sidecar has, and the write's compare-and-set catches up.
   */
  async load(): Promise<void> {
    const { store, logger } = this;
    const key = this.key();
    const read = store.readRecord;
    if (!key || !read) {
      this.loaded = true;
      return;
    }
    if (this.loaded && !store.replaceRecord) return;
    let text: string | undefined;
    try {
      text = await read.call(store, key);
    } catch (e) {
      if (!this.loaded) throw e;
      logger.warn(`detector: re-reading its state failed (this pass uses what it has): ${(e as Error).message}`);
      return;
    }
    if (this.loaded && text === this.savedText) return;
    this.adopt(text);
  }

  /** The stored text becomes the base of the next compare-and-set; its facts join ours. */
  private adopt(text: string | undefined): void {
    const { state, problem } = decodeState(text);
    if (problem) this.logger.warn(`detector: ${problem}`);
    this.state = this.loaded ? mergeStates(this.state, state) : state;
    this.savedText = text;
    this.loaded = true;
  }

  /**
   * Writes the state when it changed, with the store's compare-and-set against the text this
   * sidecar last read or wrote: when another sidecar of the job wrote meanwhile, its record is read
   * again, merged, and the merge written — a plain overwrite lost the other's update (a backoff
   * level raised, an operator's unblock noticed, incidents). Bounded: a write that keeps losing
   * is tried again next pass, with nothing lost (the state stays in memory).
   */
  async save(): Promise<void> {
    const { store, logger } = this;
    const key = this.key();
    const write = store.writeRecord;
    const read = store.readRecord;
    if (!key || !write || !read) return;
    // Most passes of most jobs change nothing (no failure, no block): with a thousand jobs on one
    // ZooKeeper ensemble, writing anyway was a hundred quorum writes a second for nothing.
    let text = encodeState(this.state);
    const now = this.clock.now();
    if (text === this.savedText && (this.state.touchedAt ?? -Infinity) > now - TOUCH_EVERY_MS) return;
    this.state.touchedAt = now;
    text = encodeState(this.state);
    try {
      const replace = store.replaceRecord;
      if (!replace) {
        await write.call(store, key, text);
        this.savedText = text;
        return;
      }
      for (let round = 0; round < SAVE_ROUNDS; round++) {
        if (await replace.call(store, key, this.savedText, text)) {
          this.savedText = text;
          return;
        }
        const cur = await read.call(store, key);
        if (cur === text) {
          // Ours, applied although its answer was lost.
          this.savedText = text;
          return;
        }
        this.adopt(cur);
        text = encodeState(this.state);
        if (text === this.savedText) return;
      }
      logger.warn(`detector: saving its state kept racing another writer of ${key} (${SAVE_ROUNDS} rounds); kept in memory, tried again next pass`);
    } catch (e) {
      logger.warn(`detector: saving its state failed (kept in memory, retried next pass): ${(e as Error).message}`);
    }
  }

  /** Whether sidecars can share the record safely: the store has records and compare-and-set. */
  get shared(): boolean {
    return this.key() !== undefined && typeof this.store.readRecord === 'function' && typeof this.store.replaceRecord === 'function';
  }

  /**
   * Applies `change` and writes the state at once, by compare-and-set against the text this
   * sidecar last read or wrote: the fence of a reservation (reservation.ts) or a lease claim
   * (leadership.ts). 'won': the record holds the change. 'lost': another sidecar wrote meanwhile;
   * the change is undone and that record merged in, so the caller decides again from both.
   * 'unshared': a store without compare-and-set (one sidecar only): the change is kept, save()
   * writes it. A store failure throws, the change undone (if it was applied all the same, the
   * next save merges it back, and a reservation in it is abandoned in time: reservation.ts).
   */
  async commit(change: (s: DetectorState) => void): Promise<'won' | 'lost' | 'unshared'> {
    const { store } = this;
    const key = this.key();
    const { replaceRecord: replace, readRecord: read } = store;
    if (!key || !replace || !read) {
      change(this.state);
      return 'unshared';
    }
    const before = structuredClone(this.state);
    change(this.state);
    const text = encodeState(this.state);
    try {
      if (await replace.call(store, key, this.savedText, text)) {
        this.savedText = text;
        return 'won';
      }
      const cur = await read.call(store, key);
      if (cur === text) {
        // Ours, applied although its answer was lost (ZooKeeper answers the retry of a set that
        // was applied with BAD_VERSION). Taken for lost, the change was undone and merged back
        // from the store as another sidecar's: a reservation then read as one being made
        // elsewhere, and its host went unblocked until it was abandoned two minutes later.
        this.savedText = text;
        return 'won';
      }
      this.state = before;
      this.adopt(cur);
      return 'lost';
    } catch (e) {
      this.state = before;
      throw e;
    }
  }

  /**
   * A sidecar that does not run the detector (leadership.ts) holds the record as stored: it has
   * nothing of its own to add, and merging every pass (a merge keeps both sides' facts) made a
   * standby keep every incident the runner ever pruned, for as long as it stood by. When it takes
   * over it goes on from the runner's state, its place in the sources included.
   */
  followStored(): void {
    if (this.savedText === undefined || this.followedText === this.savedText) return;
    this.followedText = this.savedText;
    this.state = decodeState(this.savedText).state;
  }
}
