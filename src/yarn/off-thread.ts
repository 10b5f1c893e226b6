/**
 * Parses big RM answers in a worker thread (rm-json-worker.ts). One worker per process, started on
 * first use and unref'd (it never keeps a CLI alive); requests are answered in order. A small
 * answer is parsed inline: below OFF_THREAD_BYTES a round trip to the worker costs more than the
 * parse. If the worker cannot start or dies, parsing falls back to inline (slower for the loop,
 * never wrong).
 */
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ClusterNode } from './types';
import { RmShapeError, parseNodes } from './rm-json';
import { decodeNodeRows } from './node-rows';
import type { ParseReply, ParseRequest } from './rm-json-worker';

/** 256 KB of JSON is ~700 nodes: ~5 ms inline on a busy 2-core machine. */
export const OFF_THREAD_BYTES = 256 * 1024;

export class NotJsonError extends Error {}

type Pending = { resolve: (r: ParseReply) => void; reject: (e: Error) => void };

let worker: Worker | undefined;
let broken = false;
let nextId = 1;
const pending = new Map<number, Pending>();

function failAll(e: Error): void {
  for (const p of pending.values()) p.reject(e);
  pending.clear();
}

function getWorker(): Worker | undefined {
  if (broken) return undefined;
  if (worker) return worker;
  try {
    const w = new Worker(path.join(__dirname, 'rm-json-worker.js'));
    w.unref();
    w.on('message', (r: ParseReply) => {
      const p = pending.get(r.id);
      if (!p) return;
      pending.delete(r.id);
      if (pending.size === 0) w.unref();
      p.resolve(r);
    });
    w.on('error', (e) => {
      worker = undefined;
      failAll(e);
    });
    w.on('exit', () => {
      if (worker === w) worker = undefined;
      failAll(new Error('the RM parsing worker exited'));
    });
    worker = w;
    return w;
  } catch {
    broken = true;
    return undefined;
  }
}

function inline(text: string): ClusterNode[] {
  let body: unknown;
  try {
    body = text.trim() === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (body === undefined) throw new NotJsonError('not JSON');
  return parseNodes(body);
}

/**
 * The node list from the RM's raw answer. Throws NotJsonError for a body that is not JSON and
 * RmShapeError for JSON of the wrong shape, like the inline parsers.
 */
export async function parseNodesText(text: string): Promise<ClusterNode[]> {
  if (text.length < OFF_THREAD_BYTES) return inline(text);
  const w = getWorker();
  if (!w) return inline(text);
  const id = nextId++;
  let reply: ParseReply;
  try {
    reply = await new Promise<ParseReply>((resolve, reject) => {
      pending.set(id, { resolve, reject });
      if (pending.size === 1) w.ref();
      w.postMessage({ id, kind: 'nodes', body: text } satisfies ParseRequest);
    });
  } catch {
    return inline(text);
  }
  if (!reply.ok) {
    if (reply.notJson) throw new NotJsonError('not JSON');
    if (reply.shape) throw new RmShapeError(reply.error);
    throw new Error(reply.error);
  }
  return decodeNodeRows(reply.rows, reply.count);
}

/** Stops the worker (tests; a sidecar's exit ends it anyway). */
export async function stopParsingWorker(): Promise<void> {
  const w = worker;
  worker = undefined;
  if (w) await w.terminate();
}
