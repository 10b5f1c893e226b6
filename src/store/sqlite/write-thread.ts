/**
 * The SQLite store's write thread: owns one writing connection and runs each write the store
 * posts, in order, one at a time (sqlite/writes.ts). better-sqlite3 is synchronous, so a commit's
 * fsync blocks the thread that runs it; here that is this thread, and the sidecar's event loop
 * keeps serving requests meanwhile (the next group commit gathers them).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteWrites, ThreadInit, ThreadReply, ThreadRequest, openWritable, runWrite, toWire } from './writes';

if (parentPort) {
  const port = parentPort;
  const init = workerData as ThreadInit;
  const db = openWritable(init.file, init.busyTimeoutMs);
  const writes = new SqliteWrites(db);
  port.on('message', (m: ThreadRequest) => {
    if ('close' in m) {
      db.close();
      port.postMessage({ id: m.id, ok: true, value: undefined } satisfies ThreadReply);
      port.close();
      return;
    }
    let reply: ThreadReply;
    try {
      reply = { id: m.id, ok: true, value: runWrite(writes, m.write) };
    } catch (e) {
      reply = { id: m.id, ok: false, error: toWire(e) };
    }
    port.postMessage(reply);
  });
}
