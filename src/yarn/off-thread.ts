/**
 * The RM's node list off the event loop (rm-json-worker.ts): the worker fetches it (fetchNodes)
 * or parses a body received here (parseNodesText). One worker per process, started on first use
 * and unref'd (it never keeps a CLI alive). If the worker cannot start or dies, the caller falls
 * back to the main thread (slower for the loop, never wrong).
 */
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Clock } from '../core/clock';
import { PeerLimits } from './peer-http';
import { ClusterNode } from './types';
import { RmShapeError, parseNodes } from './rm-json';
import { decodeNodeRows } from './node-rows';
import type { AnswerHeaders, CancelRequest, FetchNodesRequest, FetchReply, ParseReply, ParseRequest } from './rm-json-worker';

/** 256 KB of JSON is ~700 nodes: ~5 ms inline on a busy 2-core machine. */
export const OFF_THREAD_BYTES = 256 * 1024;

export class NotJsonError extends Error {}

type Reply = ParseReply | FetchReply;
type Pending = { resolve: (r: Reply) => void; reject: (e: Error) => void };

/** The running worker and the requests it has not answered yet (each worker its own: one that is stopping fails only its own). */
interface Running {
  w: Worker;
  pending: Map<number, Pending>;
}

let worker: Running | undefined;
let broken = false;
let nextId = 1;

function getWorker(): Running | undefined {
  if (broken) return undefined;
  if (worker) return worker;
  try {
    const w = new Worker(path.join(__dirname, 'rm-json-worker.js'));
    const r: Running = { w, pending: new Map() };
    const failAll = (e: Error): void => {
      if (worker === r) worker = undefined;
      for (const p of r.pending.values()) p.reject(e);
      r.pending.clear();
    };
    w.unref();
    w.on('message', (reply: Reply) => {
      const p = r.pending.get(reply.id);
      if (!p) return;
      r.pending.delete(reply.id);
      if (r.pending.size === 0) w.unref();
      p.resolve(reply);
    });
    w.on('error', (e) => failAll(e));
    w.on('exit', () => failAll(new Error('the RM parsing worker exited')));
    worker = r;
    return r;
  } catch {
    broken = true;
    return undefined;
  }
}

/** The node list parsed and validated on this thread (NotJsonError, RmShapeError as parseNodesText). */
export function parseNodesInline(text: string): ClusterNode[] {
  let body: unknown;
  try {
    body = text.trim() === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (body === undefined) throw new NotJsonError('not JSON');
  return parseNodes(body);
}

/** What ask() answers when its deadline passed first (the worker was told to abandon the request). */
const PAST_DEADLINE = Symbol('past deadline');

/**
 * Posts one request to the worker; undefined when there is no worker (or it died meanwhile).
 * With a deadline (on the caller's clock) the request is cancelled in the worker when it passes.
 */
async function ask(msg: ParseRequest | FetchNodesRequest, deadline?: { clock: Clock; ms: number }): Promise<Reply | typeof PAST_DEADLINE | undefined> {
  const r = getWorker();
  if (!r) return undefined;
  let cancel: (() => void) | undefined;
  try {
    return await new Promise<Reply | typeof PAST_DEADLINE>((resolve, reject) => {
      r.pending.set(msg.id, { resolve, reject });
      if (r.pending.size === 1) r.w.ref();
      r.w.postMessage(msg);
      cancel = deadline?.clock.setTimer(deadline.ms, () => {
        if (!r.pending.delete(msg.id)) return;
        if (r.pending.size === 0) r.w.unref();
        r.w.postMessage({ id: msg.id, kind: 'cancel' } satisfies CancelRequest);
        resolve(PAST_DEADLINE);
      });
    });
  } catch {
    return undefined;
  } finally {
    cancel?.();
  }
}

/**
 * The node list from the RM's raw answer. Throws NotJsonError for a body that is not JSON and
 * RmShapeError for JSON of the wrong shape, like the inline parsers.
 */
export async function parseNodesText(text: string): Promise<ClusterNode[]> {
  if (text.length < OFF_THREAD_BYTES) return parseNodesInline(text);
  const reply = await ask({ id: nextId++, kind: 'nodes', body: text });
  if (reply === undefined || reply === PAST_DEADLINE || !('ok' in reply)) return parseNodesInline(text);
  if (!reply.ok) {
    if (reply.notJson) throw new NotJsonError('not JSON');
    if (reply.shape) throw new RmShapeError(reply.error);
    throw new Error(reply.error);
  }
  return decodeNodeRows(reply.rows, reply.count);
}

/** What the worker's GET of the node list came to, with the rows turned back into nodes. */
export type FetchedNodes =
  | { kind: 'nodes'; status: number; headers: AnswerHeaders; nodes: ClusterNode[]; bytes: number }
  | { kind: 'other'; status: number; headers: AnswerHeaders; text: string }
  | { kind: 'not-json'; status: number; headers: AnswerHeaders; text: string }
  | { kind: 'shape'; status: number; headers: AnswerHeaders; error: string }
  | { kind: 'too-large'; status: number; bytes: number }
  | { kind: 'deadline' }
  | { kind: 'transport'; code?: string; message: string; timeout: boolean };

/**
 * One GET of `url` made by the worker, the body parsed and validated there; only the rows come
 * back. The limits are the caller's: the worker stops reading past maxBytes, and the deadline
 * runs here, on the caller's clock. Undefined when no worker can run it: the caller then makes
 * the request itself.
 */
export async function fetchNodes(url: string, o: { headers: Record<string, string>; limits: PeerLimits; clock: Clock; ca?: string }): Promise<FetchedNodes | undefined> {
  const { limits } = o;
  const request: FetchNodesRequest = { id: nextId++, kind: 'fetch-nodes', url, headers: o.headers, timeoutMs: limits.idleMs ?? limits.deadlineMs, maxBytes: limits.maxBytes, ...(o.ca !== undefined ? { ca: o.ca } : {}) };
  const reply = await ask(request, { clock: o.clock, ms: limits.deadlineMs });
  if (reply === PAST_DEADLINE) return { kind: 'deadline' };
  if (reply === undefined || !('kind' in reply)) return undefined;
  if (reply.kind !== 'nodes') {
    const { id: _id, ...rest } = reply;
    return rest;
  }
  return { kind: 'nodes', status: reply.status, headers: reply.headers, nodes: await decodeNodeRows(reply.rows, reply.count), bytes: reply.bytes };
}

/** Whether the worker thread is running now (tests). */
export function parsingWorkerRunning(): boolean {
  return worker !== undefined;
}

/** Stops the worker if nothing is waiting for it (it starts again on the next big read). */
export async function releaseIdleWorker(): Promise<void> {
  if (worker && worker.pending.size === 0) await stopParsingWorker();
}

/** Stops the worker (tests; a sidecar's exit ends it anyway). */
export async function stopParsingWorker(): Promise<void> {
  const r = worker;
  worker = undefined;
  if (r) await r.w.terminate();
}
