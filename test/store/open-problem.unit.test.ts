/**
 * A SQLite file that cannot be opened for writing is said for what it is: SQLite's own
 * "unable to open database file" (SQLITE_CANTOPEN) names neither a read-only mount nor a folder
 * the process may not write. The probes' answers are injected (the suite runs as any user).
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { openProblem, probeWriteAccess } from '../../src/store/sqlite/open-problem';
import { tempDir } from '../support/paths';

describe('store/sqlite: why a file could not be opened for writing', () => {
  const file = '/var/lib/blocklist/blocklist.db';
  it('names a read-only file system, a read-only file, a folder not writable, a missing folder', () => {
    assert.match(openProblem(file, { folder: 'EROFS', file: 'EROFS' }) ?? '', /blocklist\.db is on a read-only file system \(SQLite writes the file and creates blocklist\.db-wal and blocklist\.db-shm beside it\): mount it read-write/);
    assert.match(openProblem(file, { folder: undefined, file: 'EACCES' }) ?? '', /blocklist\.db is read-only for this process \(uid \d+\)/);
    assert.match(openProblem(file, { folder: 'EACCES', file: undefined }) ?? '', /the folder \/var\/lib\/blocklist is not writable for this process .*creates blocklist\.db-wal/);
    assert.match(openProblem(file, { folder: 'ENOENT', file: undefined }) ?? '', /the folder \/var\/lib\/blocklist does not exist/);
    assert.match(openProblem(file, { folder: undefined, file: 'ENOSPC' }) ?? '', /cannot be written \(ENOSPC\): .*cluster\.resource-blocklist\.store\.sqlite\.path/);
    assert.equal(openProblem(file, { folder: undefined, file: undefined }), undefined, "no problem found: SQLite's message stands");
  });

  it('the probe finds a writable folder writable and leaves nothing behind', () => {
    const dir = tempDir('blocklist-probe-');
    assert.deepEqual(probeWriteAccess(path.join(dir, 'b.db')), { folder: undefined, file: undefined });
    assert.equal(probeWriteAccess(path.join(dir, 'nope', 'b.db')).folder, 'ENOENT');
  });
});
