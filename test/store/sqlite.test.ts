import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteStore } from '../../src/store/sqlite-store';
import { describeStoreConformance } from './conformance';

describeStoreConformance('sqlite', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blocklist-sqlite-'));
  const file = path.join(dir, 'blocklist.db');
  return {
    open: async () => new SqliteStore(file),
    async writeRaw(id, text) {
      // A second connection, as a hand edit would be; end_ts NULL = never expires.
      const db = new Database(file);
      try {
        db.prepare('INSERT OR REPLACE INTO items(id, end_ts, data) VALUES (?, NULL, ?)').run(id, text);
      } finally {
        db.close();
      }
    },
    cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
});
