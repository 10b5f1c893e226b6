/**
 * Disk space kept aside so that lifting a block never fails on a full disk. A removal writes to
 * SQLite's WAL like any other change, so on a full file system a DELETE answered 503 (or not,
 * depending on whether the WAL happened to have room): the operator could not give a node back
 * to YARN when it mattered most. The store keeps a file of reserved bytes beside the database;
 * a removal that fails for lack of space releases it and is tried once more, while new blocks
 * never use it (they wait for space: a block that cannot be stored is refused, not lost). The
 * reserve is made again once there is room.
 */
import * as fs from 'node:fs';

/** What the store asks of its reserve. */
export interface SpaceReserve {
  /** Makes the reserve when it is missing (quietly: a full disk makes it later). */
  ensure(): void;
  /** Gives the reserved space back; whether there was any to give. */
  release(): boolean;
}

/** 1 MiB: a removal needs a few WAL pages of 4 KiB; this covers hundreds of them, and costs little. */
export const RESERVE_BYTES = 1024 * 1024;

/** How often a missing reserve is tried again after a write (its making writes megabytes). */
const RETRY_MS = 30_000;

/** A file of zeros (really written, so the file system has allocated it), `<database>.reserve`. */
export class FileReserve implements SpaceReserve {
  private triedAt = -Infinity;

  constructor(
    readonly file: string,
    private readonly bytes = RESERVE_BYTES,
    private readonly now: () => number = Date.now,
  ) {}

  ensure(): void {
    const t = this.now();
    if (t - this.triedAt < RETRY_MS) return;
    this.triedAt = t;
    try {
      if (fs.statSync(this.file).size >= this.bytes) return;
    } catch {
      // missing: made below
    }
    const tmp = `${this.file}.tmp`;
    try {
      fs.writeFileSync(tmp, Buffer.alloc(this.bytes));
      fs.renameSync(tmp, this.file);
    } catch {
      fs.rmSync(tmp, { force: true });
    }
  }

  release(): boolean {
    try {
      fs.unlinkSync(this.file);
      this.triedAt = this.now();
      return true;
    } catch {
      return false;
    }
  }
}

/** Whether a SQLite (or file system) error means the disk is full. */
export function isDiskFull(e: unknown): boolean {
  const code = String((e as { code?: unknown } | null)?.code ?? '');
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || /database or disk is full/i.test((e as Error | null)?.message ?? '');
}
