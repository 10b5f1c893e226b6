/**
 * Worker thread for the RM's biggest answer, the node list (~3-7 MB of JSON at 10,000 nodes): it
 * makes the HTTP request itself, receives the body, parses and validates it, and sends the main
 * thread only compact rows (node-rows.ts), which the main thread turns into objects a slice at a
 * time. The sidecar's event loop meanwhile serves the API, the proxy pushes and the ZooKeeper
 * pings: neither the megabytes on the socket, nor their decoding to text, nor the JSON.parse
 * (60-250 ms on a busy machine) run there. The main thread keeps what needs its state: which RM
 * to ask (HA order, a standby's 307), the Authorization header (a SPNEGO token made by its
 * Kerberos context) and the checks of the answer (401 → fresh login, mutual authentication).
 *
 * Also still answers `nodes` requests (a body already received on the main thread).
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { parentPort } from 'node:worker_threads';
import { RmShapeError, parseNodes } from './rm-json';
import { encodeNodeRows } from './node-rows';

export interface ParseRequest {
  id: number;
  kind: 'nodes';
  body: ArrayBuffer | string;
}

/** GET one URL and, on a 2xx, parse it as the RM's node list. */
export interface FetchNodesRequest {
  id: number;
  kind: 'fetch-nodes';
  url: string;
  headers: Record<string, string>;
  /** No byte for this long (connecting, or between chunks) ends the request, as the client's idle timeout does. */
  timeoutMs: number;
  /** A body past this many bytes ends the request ('too-large'): no more is read. */
  maxBytes: number;
  /** PEM bundle to trust for https (yarn.ssl.ca-file); absent: the platform's roots. */
  ca?: string;
}

/** The main thread's deadline passed: the request is abandoned, with no reply. */
export interface CancelRequest {
  id: number;
  kind: 'cancel';
}

export type ParseReply = { id: number; ok: true; rows: string; count: number } | { id: number; ok: false; error: string; shape: boolean; notJson: boolean };

/** The headers the client's checks need from any answer. */
export interface AnswerHeaders {
  location?: string;
  wwwAuthenticate?: string;
}

/** Largest non-2xx body passed back whole (an error page or a RemoteException is far smaller). */
export const OTHER_BODY_MAX = 64 * 1024;

export type FetchReply =
  | { id: number; kind: 'nodes'; status: number; headers: AnswerHeaders; rows: string; count: number; bytes: number }
  /** Not a 2xx: the body's text (up to OTHER_BODY_MAX), for redirects, 401 and error messages. */
  | { id: number; kind: 'other'; status: number; headers: AnswerHeaders; text: string }
  | { id: number; kind: 'not-json'; status: number; headers: AnswerHeaders; text: string }
  | { id: number; kind: 'shape'; status: number; headers: AnswerHeaders; error: string }
  /** The body passed maxBytes (counted as it arrived; the request was ended there). */
  | { id: number; kind: 'too-large'; status: number; bytes: number }
  /** No answer: connection refused or reset, DNS, TLS, or nothing for timeoutMs. */
  | { id: number; kind: 'transport'; code?: string; message: string; timeout: boolean };

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(', ') : v);

function parseReply(id: number, text: string): ParseReply {
  let body: unknown;
  try {
    body = text.trim() === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (body === undefined) return { id, ok: false, error: 'not JSON', shape: false, notJson: true };
  try {
    const nodes = parseNodes(body);
    return { id, ok: true, rows: encodeNodeRows(nodes), count: nodes.length };
  } catch (e) {
    return { id, ok: false, error: (e as Error).message, shape: e instanceof RmShapeError, notJson: false };
  }
}

/** Reads one answer, at most req.maxBytes of it; `stop` ends the request (past the bound). */
function receive(req: FetchNodesRequest, res: http.IncomingMessage, done: (r: FetchReply) => void, stop: () => void): void {
  const { id } = req;
  const status = res.statusCode ?? 0;
  const headers: AnswerHeaders = {};
  const location = one(res.headers.location);
  const negotiate = one(res.headers['www-authenticate']);
  if (location !== undefined) headers.location = location;
  if (negotiate !== undefined) headers.wwwAuthenticate = negotiate;
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > req.maxBytes) {
    done({ id, kind: 'too-large', status, bytes: declared });
    return stop();
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  const ok = status >= 200 && status < 300;
  res.on('data', (c: Buffer) => {
    bytes += c.length;
    if (bytes > req.maxBytes) {
      done({ id, kind: 'too-large', status, bytes });
      return stop();
    }
    if (ok || bytes <= OTHER_BODY_MAX) chunks.push(c);
  });
  res.on('error', (e: NodeJS.ErrnoException) => done({ id, kind: 'transport', ...(e.code ? { code: e.code } : {}), message: e.message, timeout: false }));
  res.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    if (!ok) return done({ id, kind: 'other', status, headers, text: text.slice(0, OTHER_BODY_MAX) });
    const p = parseReply(id, text);
    if (p.ok) done({ id, kind: 'nodes', status, headers, rows: p.rows, count: p.count, bytes });
    else if (p.notJson) done({ id, kind: 'not-json', status, headers, text: text.slice(0, 1024) });
    else done({ id, kind: 'shape', status, headers, error: p.error });
  });
}

/** Requests in flight, so a cancel can end one. */
const inFlight = new Map<number, http.ClientRequest>();

export function fetchNodes(req: FetchNodesRequest): Promise<FetchReply> {
  const { id } = req;
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: FetchReply): void => {
      if (settled) return;
      settled = true;
      inFlight.delete(id);
      resolve(r);
    };
    let target: URL;
    try {
      target = new URL(req.url);
    } catch (e) {
      done({ id, kind: 'transport', message: (e as Error).message, timeout: false });
      return;
    }
    const options: https.RequestOptions = { method: 'GET', headers: { Accept: 'application/json', ...req.headers } };
    if (target.protocol === 'https:' && req.ca !== undefined) Object.assign(options, { ca: req.ca, rejectUnauthorized: true });
    const get = target.protocol === 'https:' ? https.request : http.request;
    const r = get(target, options, (res) => receive(req, res, done, () => r.destroy()));
    r.setTimeout(req.timeoutMs, () => {
      done({ id, kind: 'transport', code: 'ETIMEDOUT', message: `no answer within ${req.timeoutMs} ms`, timeout: true });
      r.destroy();
    });
    r.on('error', (e: NodeJS.ErrnoException) => done({ id, kind: 'transport', ...(e.code ? { code: e.code } : {}), message: e.message, timeout: false }));
    inFlight.set(id, r);
    r.end();
  });
}

parentPort?.on('message', (req: ParseRequest | FetchNodesRequest | CancelRequest) => {
  if (req.kind === 'cancel') {
    inFlight.get(req.id)?.destroy();
    inFlight.delete(req.id);
    return;
  }
  if (req.kind === 'fetch-nodes') {
    void fetchNodes(req).then((reply) => parentPort?.postMessage(reply));
    return;
  }
  parentPort?.postMessage(parseReply(req.id, typeof req.body === 'string' ? req.body : Buffer.from(req.body).toString('utf8')));
});
