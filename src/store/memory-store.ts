/**
 * A store in memory, for the unit lane and for the engine's tests: no file, no fsync, no server.
 * It keeps the same contract as the SQLite and ZooKeeper stores (test/store/memory.unit.test.ts runs
 * the same conformance suite): items are held as codec text, so a decode failure behaves as it does
 * on disk; add() is the same read → decide → compare-and-set as the ZooKeeper store (cas-add.ts),
 * with an await between the read and the write, so concurrent adds really do lose rounds and retry;
 * version() moves on every change and only then; watch() notifies after every change.
 *
 * Several MemoryStore instances on one MemoryBackend share the data, as two sidecars share a file
 * or an ensemble.
 */
import { systemClock, Clock } from '../core/clock';
import { BlockedItem, tagMatches } from '../model/item';
import { isExpired } from '../model/effective';
import { AddOutcome, AddRequest, BlocklistStore, ItemChangedError, checkRecordKey } from './store';
import { CorruptItemError, decodeStored } from './codec';
import { silentLogger, Logger } from '../core/logger';
import { Quarantine, QuarantinedRow, quarantinedRow } from './quarantine';
import { CasLostError, CasPort, Versioned, casAdd } from './cas-add';
import { Deadline } from './retry';

interface Entry {
  text: string;
  version: number;
  /** Decoded once, on first read. */
  decoded?: BlockedItem | CorruptItemError;
}

/** The shared state: what a file or an ensemble is to the other stores. */
export class MemoryBackend {
  readonly entries = new Map<string, Entry>();
  /** Named records (BlocklistStore.writeRecord): not items, so they do not move `version`. */
  readonly records = new Map<string, string>();
  /** Moves on every change; an entry's version is the store version that wrote it (never reused). */
  version = 0;
  private readonly listeners = new Set<() => void>();

  /** Writes text as stored data, bypassing the codec (a hand edit, a corrupt row). */
  writeRaw(id: string, text: string): void {
    this.entries.set(id, { text, version: this.version + 1 });
    this.changed();
  }

  changed(): void {
    this.version++;
    for (const l of [...this.listeners]) queueMicrotask(l);
  }

  subscribe(l: () => void): () => void {
    const once = () => l();
    this.listeners.add(once);
    return () => this.listeners.delete(once);
  }
}

export interface MemoryStoreOptions {
  backend?: MemoryBackend;
  /** Whose timers a retry waits on (only a fault injected by a test makes a round transient). */
  clock?: Clock;
  /** Bound of one add() (ms). */
  operationTimeoutMs?: number;
  /** Called between add()'s read and its compare-and-set: a test makes "changed meanwhile" here. */
  beforeWrite?: (id: string) => void | Promise<void>;
  /** Where a quarantined row is reported. */
  logger?: Logger;
}

function decodeEntry(id: string, e: Entry): BlockedItem {
  if (e.decoded === undefined) {
    try {
      e.decoded = decodeStored(id, e.text);
    } catch (err) {
      if (!(err instanceof CorruptItemError)) throw err;
      e.decoded = err;
    }
  }
  if (e.decoded instanceof CorruptItemError) throw e.decoded;
  return e.decoded;
}

export class MemoryStore implements BlocklistStore {
  readonly description = 'memory';
  readonly backend: MemoryBackend;
  private readonly port: CasPort<number>;
  private readonly quarantine: Quarantine;
  /** The last list() and the backend version it reflects. */
  private listed: { version: number; items: BlockedItem[] } | undefined;

  constructor(private readonly opts: MemoryStoreOptions = {}) {
    this.backend = opts.backend ?? new MemoryBackend();
    this.quarantine = new Quarantine(opts.logger ?? silentLogger, this.description);
    const b = this.backend;
    const entries = b.entries;
    this.port = {
      read: async (id) => {
        const e = entries.get(id);
        return e ? ({ item: decodeEntry(id, e), version: e.version, text: e.text } satisfies Versioned<number>) : undefined;
      },
      create: async (id, text) => {
        await opts.beforeWrite?.(id);
        if (entries.has(id)) throw new CasLostError(id);
        entries.set(id, { text, version: b.version + 1 });
        b.changed();
      },
      replace: async (id, text, version) => {
        await opts.beforeWrite?.(id);
        const e = entries.get(id);
        if (!e || e.version !== version) throw new CasLostError(id);
        entries.set(id, { text, version: b.version + 1 });
        b.changed();
      },
    };
  }

  add(req: AddRequest): Promise<AddOutcome> {
    return casAdd(this.port, req, {
      deadline: new Deadline(this.opts.operationTimeoutMs ?? 5000),
      clock: this.opts.clock ?? systemClock,
      classify: (e) => (e instanceof CasLostError ? 'contention' : 'fatal'),
      exhausted: (last) => last,
    });
  }

  /** In order, one at a time: a later request for the same id sees the earlier one. */
  async addMany(reqs: AddRequest[]): Promise<AddOutcome[]> {
    const out: AddOutcome[] = [];
    for (const r of reqs) out.push(await this.add(r));
    return out;
  }

  async get(id: string): Promise<BlockedItem | undefined> {
    const e = this.backend.entries.get(id);
    return e ? decodeEntry(id, e) : undefined;
  }

  async list(): Promise<readonly BlockedItem[]> {
    // An unchanged version means unchanged entries: hand out the last listing (as the SQLite store does).
    if (this.listed?.version === this.backend.version) return [...this.listed.items];
    const items: BlockedItem[] = [];
    const bad: QuarantinedRow[] = [];
    for (const id of [...this.backend.entries.keys()].sort()) {
      try {
        items.push(decodeEntry(id, this.backend.entries.get(id) as Entry));
      } catch (e) {
        if (!(e instanceof CorruptItemError)) throw e;
        bad.push(quarantinedRow(e, id));
      }
    }
    this.quarantine.replace(bad);
    this.listed = { version: this.backend.version, items };
    return [...items];
  }

  quarantined(): QuarantinedRow[] {
    return this.quarantine.list();
  }

  async removeQuarantined(id: string): Promise<QuarantinedRow | undefined> {
    const e = this.backend.entries.get(id);
    if (!e) return undefined;
    try {
      decodeEntry(id, e);
      return undefined;
    } catch (err) {
      if (!(err instanceof CorruptItemError)) throw err;
      this.backend.entries.delete(id);
      this.backend.changed();
      this.quarantine.drop(id);
      return quarantinedRow(err, id);
    }
  }

  async remove(id: string, ifMatch?: string): Promise<BlockedItem | undefined> {
    const e = this.backend.entries.get(id);
    if (!e) return undefined;
    const item = decodeEntry(id, e);
    if (ifMatch !== undefined && !tagMatches(ifMatch, item)) throw new ItemChangedError(item);
    this.backend.entries.delete(id);
    this.backend.changed();
    return item;
  }

  async removeExpired(now: number): Promise<BlockedItem[]> {
    const gone: BlockedItem[] = [];
    for (const [id, e] of this.backend.entries) {
      let item: BlockedItem;
      try {
        item = decodeEntry(id, e);
      } catch {
        continue; // a corrupt item never blocks expiry of the rest
      }
      if (isExpired(item, now)) {
        this.backend.entries.delete(id);
        gone.push(item);
      }
    }
    if (gone.length) this.backend.changed();
    return gone;
  }

  async version(): Promise<string> {
    return String(this.backend.version);
  }

  watch(onChange: () => void): () => void {
    return this.backend.subscribe(onChange);
  }

  async readRecord(key: string): Promise<string | undefined> {
    checkRecordKey(key);
    return this.backend.records.get(key);
  }

  async writeRecord(key: string, value: string): Promise<void> {
    checkRecordKey(key);
    this.backend.records.set(key, value);
  }

  async recordKeys(prefix: string): Promise<string[]> {
    return [...this.backend.records.keys()].filter((k) => k.startsWith(prefix));
  }

  async removeRecord(key: string, expected: string): Promise<boolean> {
    checkRecordKey(key);
    if (this.backend.records.get(key) !== expected) return false;
    this.backend.records.delete(key);
    return true;
  }

  async replaceRecord(key: string, expected: string | undefined, value: string): Promise<boolean> {
    checkRecordKey(key);
    if (this.backend.records.get(key) !== expected) return false;
    this.backend.records.set(key, value);
    return true;
  }

  async close(): Promise<void> {
    // Nothing to release: the backend outlives its instances, as a file outlives a connection.
  }
}
