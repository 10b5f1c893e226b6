/**
 * add() for a store whose writes are compare-and-set on a per-item version (ZooKeeper's versioned
 * setData, the memory store): read → model/decide → create-if-absent / replace-if-version, through
 * the retry helper. A lost round (someone else wrote between our read and our write) is read and
 * decided again, so concurrent merges from any number of writers lose nothing.
 *
 * A write whose reply was lost (a transient failure after it was sent) may have been applied. The
 * next round recognises its own write (the stored text is exactly the text sent) and reports the
 * outcome it intended, instead of a conflict with itself.
 */
import { AddRequest, decide } from '../model/decide';
import { BlockedItem } from '../model/item';
import { encodeItem } from './codec';
import { retry, RetryOptions } from './retry';
import { AddOutcome, outcomeOf } from './store';

/** A compare-and-set that lost to another writer (for ports that have no error of their own). */
export class CasLostError extends Error {
  constructor(id: string) {
    super(`compare-and-set on '${id}' lost to another writer`);
    this.name = 'CasLostError';
  }
}

export interface Versioned<V> {
  item: BlockedItem;
  version: V;
  /** The stored text, exactly. */
  text: string;
}

export interface CasPort<V> {
  /** What is stored under id, or undefined. Throws CorruptItemError for text that does not decode. */
  read(id: string): Promise<Versioned<V> | undefined>;
  /** Stores `text` under id if nothing is there; fails as contention if something is. */
  create(id: string, text: string): Promise<void>;
  /** Replaces id's text if it is still at `version`; fails as contention if it moved or went. */
  replace(id: string, text: string, version: V): Promise<void>;
}

export type CasAddOptions = Omit<RetryOptions, 'onTransient' | 'exhausted'> & {
  /** What to throw when time runs out; `maybeApplied`: a write was sent and its reply lost. */
  exhausted(last: unknown, maybeApplied: boolean): unknown;
};

export async function casAdd<V>(port: CasPort<V>, req: AddRequest, opts: CasAddOptions): Promise<AddOutcome> {
  const id = req.item.id;
  /** The write in flight this round, and the one whose reply was lost. */
  let sending: { text: string; outcome: AddOutcome } | undefined;
  let unsure: { text: string; outcome: AddOutcome } | undefined;
  return retry(
    {
      ...opts,
      onTransient: () => {
        if (sending) unsure = sending;
      },
      exhausted: (last) => opts.exhausted(last, unsure !== undefined),
    },
    async () => {
      sending = undefined;
      const cur = await port.read(id);
      if (cur && unsure && cur.text === unsure.text) return unsure.outcome;
      const d = decide(cur?.item, req, req.item.created.at);
      const outcome = outcomeOf(d);
      if (d.outcome === 'created' || d.outcome === 'merged') {
        const text = encodeItem(d.write);
        sending = { text, outcome };
        if (cur) await port.replace(id, text, cur.version);
        else await port.create(id, text);
      }
      return outcome;
    },
  );
}
