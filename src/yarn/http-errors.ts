/**
 * Turning a failed HTTP exchange with a peer (the RM, the AMRM proxy, Flink) into one readable
 * YarnCallError. Shared by every client so the sync engine sees one error shape; the calls
 * themselves go through peer-http.ts (deadline, bounded answer).
 */
import { YarnCallError } from './types';

/** Connection-level failures: the peer never answered, so another RM of an HA list may. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT', 'ERR_SOCKET_CONNECTION_TIMEOUT']);

/** An error code of a request that got no answer: one another RM of an HA list may answer (no code: unknown, so yes). */
export function isConnectionCode(code: string | undefined): boolean {
  return code !== undefined ? CONNECTION_CODES.has(code) || code === 'ERR_CANCELED' || code === 'ECONNABORTED' : true;
}

/** 4xx answers will not get better by retrying, except 408 (timeout) and 429 (throttled). */
export function retriableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/** Parses a JSON body, or undefined when it is not JSON (an HTML error page, an empty body). */
export function tryParseJson(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  if (body.trim() === '') return undefined;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/** A short, single-line excerpt of a body for error messages (never the whole page). */
export function excerpt(body: unknown, max = 200): string {
  const s = typeof body === 'string' ? body : JSON.stringify(body) ?? '';
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** A non-2xx answer as YarnCallError, with the RemoteException's class and message when there is one. */
export function httpError(what: string, status: number, data: unknown): YarnCallError {
  const body = tryParseJson(data);
  const remote = remoteException(body);
  const text = remote ?? (excerpt(data) || '(empty body)');
  return new YarnCallError(`${what}: ${status} ${text}`, status, retriableStatus(status));
}

/**
 * {"RemoteException":{"exception":"NotFoundException","message":"java.lang.Exception: app with id:
 * application_… not found","javaClassName":"org.apache.hadoop.yarn.webapp.NotFoundException"}}
 * → "NotFoundException: app with id: application_… not found".
 */
export function remoteException(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const re = (body as Record<string, unknown>).RemoteException;
  if (typeof re !== 'object' || re === null) return undefined;
  const r = re as Record<string, unknown>;
  const exception = typeof r.exception === 'string' ? r.exception : typeof r.javaClassName === 'string' ? r.javaClassName.split('.').pop() : 'RemoteException';
  const message = typeof r.message === 'string' ? r.message.replace(/^java\.lang\.Exception:\s*/, '') : '';
  return message ? `${exception}: ${message}` : String(exception);
}
