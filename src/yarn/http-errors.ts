/**
 * Turning a failed HTTP exchange with YARN (the RM or the AMRM proxy) into one readable
 * YarnCallError. Shared by both clients so the sync engine sees one error shape.
 */
import axios, { AxiosError, AxiosInstance, isAxiosError } from 'axios';
import * as https from 'node:https';
import { YarnCallError } from './types';

/** Connection-level failures: the peer never answered, so another RM of an HA list may. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT', 'ERR_SOCKET_CONNECTION_TIMEOUT']);

export function isConnectionError(e: unknown): boolean {
  if (!isAxiosError(e)) return false;
  if (e.response) return false;
  return isConnectionCode(e.code);
}

/** The same for an error code alone (a request made without axios, e.g. by the node-list worker). */
export function isConnectionCode(code: string | undefined): boolean {
  return code !== undefined ? CONNECTION_CODES.has(code) || code === 'ERR_CANCELED' || code === AxiosError.ECONNABORTED : true;
}

export function isTimeout(e: unknown): boolean {
  return isAxiosError(e) && !e.response && (e.code === AxiosError.ECONNABORTED || e.code === AxiosError.ETIMEDOUT || /timeout/i.test(e.message));
}

/** An error thrown before any answer arrived (refused, reset, timed out, DNS). Always retriable. */
export function transportError(what: string, url: string, e: unknown, timeoutMs: number): YarnCallError {
  if (isTimeout(e)) return new YarnCallError(`${what}: no answer from ${url} within ${timeoutMs} ms`, undefined, true);
  const code = isAxiosError(e) && e.code ? ` (${e.code})` : '';
  const msg = e instanceof Error ? e.message : String(e);
  return new YarnCallError(`${what}: cannot reach ${url}${code}: ${msg}`, undefined, true);
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

/**
 * The HTTP client both YARN clients use: no redirects followed by axios (the RM client follows a
 * standby's 307 itself, across its HA list), every status answered (the caller maps it), and the
 * raw text kept — JSON is parsed, and refused with a clear message, by us, not by axios.
 */
export function createYarnHttp(opts: { timeoutMs: number; baseURL?: string; httpsAgent?: https.Agent }): AxiosInstance {
  return axios.create({
    ...(opts.baseURL ? { baseURL: opts.baseURL } : {}),
    timeout: opts.timeoutMs,
    maxRedirects: 0,
    validateStatus: () => true,
    responseType: 'text',
    transformResponse: [(d: unknown) => d],
    headers: { Accept: 'application/json' },
    ...(opts.httpsAgent ? { httpsAgent: opts.httpsAgent } : {}),
  });
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
