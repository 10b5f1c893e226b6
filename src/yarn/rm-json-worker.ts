/**
 * Worker thread: parses and validates a big RM answer (the node list: ~3-7 MB of JSON at 10,000
 * nodes, 60-250 ms of JSON.parse + validation) away from the sidecar's event loop, which keeps
 * serving the API, the proxy pushes and the ZooKeeper pings meanwhile. The result goes back as
 * one string of rows (see off-thread.ts), which the main thread turns into objects a slice at a
 * time; a structured clone of 10,000 objects would cost the main thread 10-50 ms in one piece.
 */
import { parentPort } from 'node:worker_threads';
import { RmShapeError, parseNodes } from './rm-json';
import { encodeNodeRows } from './node-rows';

export interface ParseRequest {
  id: number;
  kind: 'nodes';
  body: ArrayBuffer | string;
}

export type ParseReply = { id: number; ok: true; rows: string; count: number } | { id: number; ok: false; error: string; shape: boolean; notJson: boolean };

parentPort?.on('message', (req: ParseRequest) => {
  let body: unknown;
  const text = typeof req.body === 'string' ? req.body : Buffer.from(req.body).toString('utf8');
  try {
    body = text.trim() === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (body === undefined) {
    parentPort?.postMessage({ id: req.id, ok: false, error: 'not JSON', shape: false, notJson: true } satisfies ParseReply);
    return;
  }
  try {
    const nodes = parseNodes(body);
    parentPort?.postMessage({ id: req.id, ok: true, rows: encodeNodeRows(nodes), count: nodes.length } satisfies ParseReply);
  } catch (e) {
    parentPort?.postMessage({ id: req.id, ok: false, error: (e as Error).message, shape: e instanceof RmShapeError, notJson: false } satisfies ParseReply);
  }
});
