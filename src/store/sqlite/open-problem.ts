/**
 * Why a SQLite file could not be opened for writing, in words: SQLite says only "unable to open
 * database file" (SQLITE_CANTOPEN) for a read-only file system, a folder the process may not
 * write (WAL mode creates <file>-wal and <file>-shm beside the file) and a file it may not write.
 * Each is tried the way SQLite would need it, so the message names the one that fails.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The error code (EROFS, EACCES, …) of each access SQLite needs, or undefined when it works. */
export interface WriteAccess {
  folder: string | undefined;
  file: string | undefined;
}

function codeOf(e: unknown): string {
  return String((e as NodeJS.ErrnoException).code ?? (e as Error).message);
}

/** Tries what SQLite needs: to create a file in the folder, and to open the file read-write. */
export function probeWriteAccess(file: string): WriteAccess {
  const dir = path.dirname(path.resolve(file));
  let folder: string | undefined;
  const probe = path.join(dir, `.blocklist-write-probe-${process.pid}`);
  try {
    fs.closeSync(fs.openSync(probe, 'wx'));
    fs.unlinkSync(probe);
  } catch (e) {
    folder = codeOf(e);
  }
  let access: string | undefined;
  if (fs.existsSync(file)) {
    try {
      fs.closeSync(fs.openSync(file, 'r+'));
    } catch (e) {
      access = codeOf(e);
    }
  }
  return { folder, file: access };
}

/** The reason in words, or undefined when both accesses work (then SQLite's own message stands). */
export function openProblem(file: string, a: WriteAccess): string | undefined {
  const dir = path.dirname(path.resolve(file));
  const wal = `SQLite writes the file and creates ${path.basename(file)}-wal and ${path.basename(file)}-shm beside it`;
  const fix = 'mount it read-write, fix the permissions, or set cluster.resource-blocklist.store.sqlite.path to a writable place';
  if (a.folder === 'EROFS' || a.file === 'EROFS') return `${file} is on a read-only file system (${wal}): ${fix}`;
  if (a.file === 'EACCES' || a.file === 'EPERM') return `${file} is read-only for this process (uid ${process.getuid?.() ?? '?'}): ${fix}`;
  if (a.folder === 'EACCES' || a.folder === 'EPERM') return `the folder ${dir} is not writable for this process (uid ${process.getuid?.() ?? '?'}), and ${wal}: ${fix}`;
  if (a.folder === 'ENOENT') return `the folder ${dir} does not exist`;
  if (a.folder !== undefined || a.file !== undefined) return `${file} cannot be written (${a.file ?? a.folder}): ${fix}`;
  return undefined;
}
