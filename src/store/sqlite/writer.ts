/**
 * Where the SQLite store's writes run: on the store's own connection (inline: the CLI, tests, an
 * in-memory database) or on a worker thread that owns a second connection to the same file (the
 * sidecar). Both run sqlite/writes.ts; a write resolves only after its transaction committed
 * (fsync'd, synchronous=FULL) and rejects with the error the inline run would have thrown.
 */
import Database from 'better-sqlite3';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { StoreUnavailableError } from '../store';
import { WalSync } from './wal-sync';
import { OpOf, SqliteWrites, ThreadInit, ThreadReply, ThreadRequest, WriteOp, WriteResults, fromWire, runWrite } from './writes';

export interface SqliteWriter {
  /**
   * Resolves once the write is durable. `committed`, when given, is called with the result as soon
   * as the transaction committed, which can be before it is durable (InlineWriter with a WalSync):
   * what other readers can see from then on.
   */
  run<K extends WriteOp['op']>(op: OpOf<K>, committed?: (r: WriteResults[K]) => void): Promise<WriteResults[K]>;
  /** Whether a write was posted and has not answered yet. */
  readonly inFlight: boolean;
  /** Resolves once every write posted so far has answered (never rejects). */
  settled(): Promise<void>;
  /** Waits for the writes in flight, then releases the connection or thread. */
  close(): Promise<void>;
}

/**
 * Runs each write synchronously on the store's connection. Without a WalSync the connection syncs
 * inside the commit (synchronous=FULL: the fsync blocks the caller's thread); with one, the commit
 * only writes the WAL and the write resolves after the WalSync's fdatasync (wal-sync.ts).
 */
export class InlineWriter implements SqliteWriter {
  private writes: SqliteWrites | undefined;
  readonly inFlight = false;

  constructor(
    private readonly db: Database.Database,
    private readonly wal?: WalSync,
  ) {}

  run<K extends WriteOp['op']>(op: OpOf<K>, committed?: (r: WriteResults[K]) => void, lone = false): Promise<WriteResults[K]> {
    let result: WriteResults[K];
    try {
      // Prepared on first use: a read-only store never prepares its write statements.
      this.writes ??= new SqliteWrites(this.db);
      result = runWrite<K>(this.writes, op);
    } catch (e) {
      return Promise.reject(e);
    }
    committed?.(result);
    // Even a write that changed nothing waits: its answer may rest on an earlier commit not yet on disk.
    if (!this.wal) return Promise.resolve(result);
    return this.wal.durable(lone).then(
      () => result,
      (e: unknown) => {
        throw new StoreUnavailableError(`sqlite store: syncing the WAL failed after a commit, which may not survive a power cut: ${e instanceof Error ? e.message : String(e)}`, e);
      },
    );
  }

  settled(): Promise<void> {
    return Promise.resolve();
  }

  async close(): Promise<void> {}
}

/**
 * `thread`: the worker the write was posted to; only that worker's death fails it.
 * `background`: housekeeping (a checkpoint), not a write anyone waits for: it does not count as in flight.
 */
type Waiter = { resolve: (v: WriteResults[WriteOp['op']]) => void; reject: (e: Error) => void; thread: Worker; background: boolean };

/**
 * Posts each write to a worker thread (sqlite/write-thread.ts) that runs them in order on its own
 * connection. The worker is started on first use and again after it died; while it has nothing in
 * flight it does not keep the process alive.
 */
export class ThreadWriter implements SqliteWriter {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, Waiter>();
  private last: Promise<void> = Promise.resolve();

  constructor(private readonly init: ThreadInit) {}

  get inFlight(): boolean {
    return this.writesWaiting > 0;
  }

  /** Waiters that are writes (not background work). */
  private writesWaiting = 0;

  settled(): Promise<void> {
    return this.last;
  }

  /**
   * Housekeeping on the thread (a checkpoint): in order with the writes, but neither a write in
   * flight (writes behind it are not routed to the thread for it) nor waited for by settled().
   */
  background(op: OpOf<'checkpoint'>): Promise<void> {
    return this.post({ id: this.nextId++, write: op }, true).then(() => undefined);
  }

  run<K extends WriteOp['op']>(op: OpOf<K>, committed?: (r: WriteResults[K]) => void): Promise<WriteResults[K]> {
    // The thread's connection commits with synchronous=FULL: an answer is both committed and durable.
    const p = (this.post({ id: this.nextId++, write: op }) as Promise<WriteResults[K]>).then((r) => {
      committed?.(r);
      return r;
    });
    this.last = p.then(
      () => undefined,
      () => undefined,
    );
    return p;
  }

  async close(): Promise<void> {
    await this.last;
    const w = this.worker;
    if (!w) return;
    const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    await this.post({ id: this.nextId++, close: true }).catch(() => undefined);
    await exited;
  }

  private post(m: ThreadRequest, background = false): Promise<WriteResults[WriteOp['op']]> {
    return new Promise((resolve, reject) => {
      let w: Worker;
      try {
        w = this.thread();
      } catch (e) {
        reject(new StoreUnavailableError(`sqlite store: the write thread cannot start: ${e instanceof Error ? e.message : String(e)}`, e));
        return;
      }
      this.waiting.set(m.id, { resolve, reject, thread: w, background });
      if (!background) this.writesWaiting++;
      w.ref();
      w.postMessage(m);
    });
  }

  private forget(id: number, waiter: Waiter): void {
    this.waiting.delete(id);
    if (!waiter.background) this.writesWaiting--;
  }

  private waitsOn(w: Worker): boolean {
    for (const waiter of this.waiting.values()) if (waiter.thread === w) return true;
    return false;
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    // A small young generation: the thread's garbage is a few requests' worth at a time, and the
    // default semi-spaces would add megabytes of resident memory to every sidecar for nothing.
    const w = new Worker(path.join(__dirname, 'write-thread.js'), { workerData: this.init, resourceLimits: { maxYoungGenerationSizeMb: 2 } });
    w.unref();
    w.on('message', (r: ThreadReply) => {
      const waiter = this.waiting.get(r.id);
      if (!waiter) return;
      this.forget(r.id, waiter);
      if (!this.waitsOn(w)) w.unref();
      if (r.ok) waiter.resolve(r.value);
      else waiter.reject(fromWire(r.error));
    });
    const gone = (why: string) => {
      if (this.worker === w) this.worker = undefined;
      const e = new StoreUnavailableError(`sqlite store: the write thread ${why}; a write in flight may or may not have committed`);
      // Only the writes posted to this thread: an uncaught exception is reported as 'error' and the
      // thread's 'exit' comes later, by which time writes may be running on its replacement (they
      // would be failed while they commit, and their answers then dropped).
      for (const [id, waiter] of this.waiting) {
        if (waiter.thread !== w) continue;
        this.forget(id, waiter);
        waiter.reject(e);
      }
    };
    w.on('error', (e) => gone(`failed: ${e.message}`));
    w.on('exit', (code) => gone(`exited (code ${code})`));
    this.worker = w;
    return w;
  }
}
