/**
 * DNS-rebinding protection for a sidecar without tokens. Without `rest.auth.tokens-file` the API
 * listens on loopback only and every caller is the anonymous admin, so the one way in from outside
 * the machine is a browser on it: a web page whose host name is re-pointed at 127.0.0.1 can then
 * call the API "same-origin", with the page's own name in the Host header. Requests addressed to a
 * name that is not a loopback name are therefore refused (403) before any route runs; `localhost`,
 * `127.x.y.z` and `[::1]` (with any port) pass. (The configured bind address is one of these: without
 * tokens the sidecar refuses to bind anywhere else, src/security/bind-safety.ts.)
 *
 * A page of another origin on the same machine (any other local web app, another port) can still
 * send a simple cross-origin request to 127.0.0.1: its mutations are refused too (403) when the
 * browser says where they come from: an `Origin` that is not this server's own origin, or
 * `Sec-Fetch-Site: cross-site`/`same-site`. Reads stay open (the browser does not show another
 * origin the answer). With tokens configured this guard is not installed: a rebinding page has no token.
 */
import { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Logger } from '../core/logger';
import { sendErrors } from './errors';
import { isMutation } from './auth';

/** The host part of a Host header (`name`, `name:port`, `[v6]`, `[v6]:port`), lower-cased. */
export function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end < 0 ? h : h.slice(0, end + 1);
  }
  const colon = h.indexOf(':');
  return colon < 0 ? h : h.slice(0, colon);
}

export function isLoopbackHostHeader(header: string): boolean {
  const name = hostName(header).replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost') || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/**
 * Why a browser-sent mutation comes from another origin, or undefined when it does not: `Origin`
 * must name this server as the request addressed it (scheme-less compare of host and port).
 */
export function crossOrigin(headers: { origin?: string; host?: string; 'sec-fetch-site'?: string | string[] }): string | undefined {
  const site = headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return `Sec-Fetch-Site is ${site}`;
  const origin = headers.origin;
  if (origin === undefined) return undefined;
  if (origin === 'null') return "Origin is 'null' (a sandboxed page or a local file)";
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `Origin '${origin.slice(0, 100)}' is not a URL`;
  }
  const host = (headers.host ?? '').toLowerCase();
  return url.host.toLowerCase() === host ? undefined : `Origin '${origin.slice(0, 100)}' is not this server (${host.slice(0, 100)})`;
}

export const loopbackHostGuard = fp(async (app: FastifyInstance, opts: { logger: Logger }) => {
  const { logger } = opts;
  app.addHook('onRequest', async (req, reply) => {
    const host = req.headers.host;
    // No Host at all (HTTP/1.0 tools) cannot come from a browser page; only a named host can rebind.
    if (host === undefined || host === '' || isLoopbackHostHeader(host)) return;
    const shown = host.slice(0, 100);
    logger.warn(`refused ${req.method} ${req.url.split('?')[0].slice(0, 200)} from ${req.ip}: Host '${shown}' is not a loopback name (no auth configured)`);
    return sendErrors(reply, 403, [
      `Host '${shown}' is not a loopback name: without rest.auth.tokens-file this sidecar answers only requests addressed to localhost, 127.0.0.1 or [::1] (protection against DNS rebinding); configure tokens to serve other names`,
    ]);
  });
  app.addHook('onRequest', async (req, reply) => {
    if (!isMutation(req.method)) return;
    const why = crossOrigin(req.headers);
    if (why === undefined) return;
    logger.warn(`refused ${req.method} ${req.url.split('?')[0].slice(0, 200)} from ${req.ip}: cross-origin (${why}; no auth configured)`);
    return sendErrors(reply, 403, [`cross-origin change refused: ${why}; without rest.auth.tokens-file only this server's own pages and non-browser clients may change the blocklist`]);
  });
}, { name: 'loopback-host-guard' });
