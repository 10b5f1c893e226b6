/**
 * Makes the store's commits durable off the event loop. With synchronous=FULL SQLite fsyncs the WAL
 * inside every commit, on the thread that commits: for the sidecar's own connection that is the
 * event loop, which then serves nothing while the disk works (on a busy NodeManager disk, for
 * milliseconds per commit). So that connection commits with synchronous=NORMAL — in WAL mode a
 * commit then writes its frames to the WAL without syncing, and only checkpoints sync — and a
 * write is acknowledged only after an fdatasync of the WAL, run in libuv's thread pool, that began
 * after the commit: the same guarantee as FULL (an acknowledged write survives a power cut), with
 * the wait off the loop, and one fdatasync shared by every commit made while the previous one ran.
 *
 * What is different from FULL: between the commit and the fdatasync other readers (this process's
 * sync pass, another process) can see a write that a power cut would still undo; its caller has
 * no answer yet. The engine is level-triggered, so a block pushed to YARN from such a write is
 * taken back by the first pass after a restart finds it gone.
 *
 * The WAL is one file for the connection's whole life (SQLite unlinks it only when the last
 * connection closes, and this one is open), so one descriptor serves; checkpoints, which copy the
 * WAL into the database and may let it be reused, run on the write thread's own connection with
 * synchronous=FULL (write-route.ts), so the database file is synced before frames are overwritten.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';

const fdatasync: (fd: number) => Promise<void> = promisify(fs.fdatasync);

export class WalSync {
  private fd: number | undefined;
  /** The fdatasync running now. */
  private running: Promise<void> | undefined;
  /** The one that starts when it ends, shared by every commit made meanwhile. */
  private queued: Promise<void> | undefined;
  /** fdatasyncs run so far (tests, diagnostics). */
  syncs = 0;

  constructor(
    private readonly wal: string,
    private readonly syncFd: (fd: number) => Promise<void> = fdatasync,
  ) {}

  /** Resolves once everything committed before this call is on disk. */
  durable(): Promise<void> {
    if (!this.running) return this.start();
    // A sync already running may have begun before this commit: wait for the next one.
    this.queued ??= this.running.then(
      () => this.startQueued(),
      () => this.startQueued(),
    );
    return this.queued;
  }

  /** Waits for the syncs in flight, then lets the descriptor go. */
  async close(): Promise<void> {
    await Promise.allSettled([this.running, this.queued]);
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  private startQueued(): Promise<void> {
    this.queued = undefined;
    return this.start();
  }

  private start(): Promise<void> {
    const p = this.sync().finally(() => {
      if (this.running === p) this.running = undefined;
    });
    this.running = p;
    return p;
  }

  private async sync(): Promise<void> {
    this.syncs++;
    if (this.fd === undefined) {
      // The WAL's directory entry too, once: it was created when the database was opened, and a
      // power cut must not lose the file itself (SQLite syncs the directory on a new WAL's first sync).
      const fd = fs.openSync(this.wal, 'r');
      const dir = fs.openSync(path.dirname(this.wal), 'r');
      try {
        fs.fsyncSync(dir);
      } finally {
        fs.closeSync(dir);
      }
      this.fd = fd;
    }
    await this.syncFd(this.fd);
  }
}
