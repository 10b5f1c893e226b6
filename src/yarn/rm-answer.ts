/**
 * One answer of the RM as the client reads it, whichever thread received it: on the event loop
 * (peer-http.ts: small answers, redirects and errors) or in the node-list worker (off-thread.ts), which
 * sends back the parsed rows of a big node list instead of its text. rm-client.ts decides where a
 * request goes; this file says what came back in the one shape it reasons about.
 */
import * as https from 'node:https';
import { PeerLimits, deadlineError, idleError, tooLargeError, triesElsewhere, unreachableError } from './peer-http';
import { RmShapeError } from './rm-json';
import { FetchedNodes, NotJsonError, parseNodesInline } from './off-thread';
import { ClusterNode, YarnCallError } from './types';

/** One HTTP answer, whichever thread received it. */
export interface Answer {
  status: number;
  location?: string;
  wwwAuthenticate?: string;
  /** The body as text: an error, a redirect, or a 2xx received on this thread. */
  text: string;
  /** Bytes of a body the worker received (the text is then empty). */
  bytes?: number;
  /** A 2xx node list the worker received and parsed: the nodes, or why it could not. */
  nodes?: { ok: true; nodes: ClusterNode[] } | { ok: false; notJson: boolean; error: string };
}

/** The worker's reply as an answer (or the next RM, or an error), as exchange() gives it. */
export function fromWorker(what: string, url: string, f: FetchedNodes, limits: PeerLimits): { kind: 'answer'; answer: Answer } | { kind: 'next'; error: YarnCallError } {
  if (f.kind === 'transport' || f.kind === 'deadline' || f.kind === 'too-large') {
    const error =
      f.kind === 'deadline' ? deadlineError(what, url, limits)
      : f.kind === 'too-large' ? tooLargeError(what, url, limits)
      : f.timeout ? idleError(what, url, limits.idleMs ?? limits.deadlineMs)
      : unreachableError(what, url, f.code, f.message);
    if (triesElsewhere(error)) return { kind: 'next', error };
    throw error;
  }
  const answer: Answer = { status: f.status, text: '', ...f.headers };
  if (f.kind === 'other') answer.text = f.text;
  else if (f.kind === 'nodes') {
    answer.nodes = { ok: true, nodes: f.nodes };
    answer.bytes = f.bytes;
  }
  else if (f.kind === 'not-json') answer.nodes = { ok: false, notJson: true, error: f.text };
  else answer.nodes = { ok: false, notJson: false, error: f.error };
  return { kind: 'answer', answer };
}

/** A node list received on this thread, parsed here. */
export function parseHere(text: string): { ok: true; nodes: ClusterNode[] } | { ok: false; notJson: boolean; error: string } {
  try {
    return { ok: true, nodes: parseNodesInline(text) };
  } catch (e) {
    if (e instanceof NotJsonError) return { ok: false, notJson: true, error: text };
    if (e instanceof RmShapeError) return { ok: false, notJson: false, error: e.message };
    throw e;
  }
}

/** The PEM text an https agent was given as `ca` (createYarnHttpsAgent), for the worker's requests. */
export function caText(agent: https.Agent | undefined): string | undefined {
  const ca = agent?.options.ca;
  if (ca === undefined) return undefined;
  const list = Array.isArray(ca) ? ca : [ca];
  return list.map((c: string | Buffer) => (typeof c === 'string' ? c : c.toString('utf8'))).join('\n');
}
