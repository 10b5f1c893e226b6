/**
 * The web console: static files served from the package (the `console/` folder and preact + htm
 * from the installed `htm` package), no CDN, no build step.
 *
 *   GET /               302 → /ui/
 *   GET /ui             302 → /ui/
 *   GET /ui/            the page (index.html)
 *   GET /ui/<file>      its script modules and styles, each listed by name (no path is joined from a request)
 *   GET /ui/session     who the caller is: {name, role, auth}; behind the token like every API read
 *   GET /ui/history     the chart's samples (blocked, evacuating, deferred, unapplied over the last hours)
 *   GET /ui/links       where links point: the RM, the application, Flink's web UI, a node's page
 *
 * The shell (HTML, scripts, styles) is served without a token: it holds no data and is the same
 * for everyone, and a browser cannot send `Authorization: Bearer` when it navigates to a page, so
 * the page must load before it can ask for a token. Everything it shows comes from the REST API
 * with the token (kept in the tab's sessionStorage); every control is an ordinary API call.
 *
 * Every console response carries a strict Content-Security-Policy: scripts only from this origin
 * (no inline script, no eval), styles only from files, connections only back to this origin, no
 * framing. Without tokens the loopback Host guard (../host-guard.ts) applies to the console too.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendErrors } from '../errors';
import { HistoryPoint } from '../../metrics/history';
import { ConsoleLinks } from './links';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The console's own files, by the name they are served under (relative to /ui/). */
const OWN_FILES: Record<string, string> = {
  '': 'index.html',
  'app.js': 'app.js',
  'api.js': 'api.js',
  'format.js': 'format.js',
  'panels.js': 'panels.js',
  'blocklist.js': 'blocklist.js',
  'figures.js': 'figures.js',
  'bits.js': 'bits.js',
  'controls.js': 'controls.js',
  'app.css': 'app.css',
  'favicon.svg': 'favicon.svg',
};
/** Served as /ui/vendor/preact-htm.js: htm's build that bundles preact and its hooks in one ES module. */
const VENDOR_NAME = 'vendor/preact-htm.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** The package root: the nearest folder above this file holding the console's index.html. */
export function consoleDir(from = __dirname): string | undefined {
  for (let dir = from; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'console');
    if (fs.existsSync(path.join(candidate, 'index.html')) && fs.existsSync(path.join(dir, 'package.json'))) return candidate;
  }
  return undefined;
}

function vendorFile(): string | undefined {
  try {
    // htm's export map does not expose the standalone file by path; its main entry sits in dist/.
    return path.join(path.dirname(require.resolve('htm')), '..', 'preact', 'standalone.module.js');
  } catch {
    return undefined;
  }
}

function load(file: string): Asset {
  const body = fs.readFileSync(file);
  return { body, type: TYPES[path.extname(file)] ?? 'application/octet-stream', etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/** Read once at start-up: a handful of small files, and no file system access per request. */
export function loadConsoleAssets(dir = consoleDir(), vendor = vendorFile()): Map<string, Asset> | { missing: string } {
  if (!dir) return { missing: 'the console files (console/index.html) are not in this installation' };
  if (!vendor || !fs.existsSync(vendor)) return { missing: "the 'htm' package (preact + htm) is not installed; run npm install" };
  const out = new Map<string, Asset>();
  for (const [name, file] of Object.entries(OWN_FILES)) out.set(name, load(path.join(dir, file)));
  out.set(VENDOR_NAME, load(vendor));
  return out;
}

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('cross-origin-resource-policy', 'same-origin');
}

/** What the console reads beyond the REST API; absent parts answer empty. */
export interface ConsoleData {
  /** The sidecar's ring of samples (src/metrics/history.ts) and its period. */
  history?: { intervalMs: number; view(): Promise<HistoryPoint[]> };
  links?: () => Promise<ConsoleLinks>;
}

export interface ConsoleOptions {
  /** Bearer tokens are configured (the session endpoint says so, so the page knows to ask). */
  auth: boolean;
  assets?: Map<string, Asset> | { missing: string };
  data?: ConsoleData;
}

export function consoleRoutes(app: FastifyInstance, opts: ConsoleOptions): void {
  const assets = opts.assets ?? loadConsoleAssets();
  const open = { openWithoutToken: true };

  const redirect = async (_req: FastifyRequest, reply: FastifyReply) => securityHeaders(reply).redirect('/ui/', 302);
  app.get('/', { config: open }, redirect);
  app.get('/ui', { config: open }, redirect);

  const serve = (name: string) => async (req: FastifyRequest, reply: FastifyReply) => {
    securityHeaders(reply);
    if (!(assets instanceof Map)) return sendErrors(reply, 404, [`the web console is not available: ${assets.missing}`]);
    const a = assets.get(name);
    if (!a) return sendErrors(reply, 404, [`no such console file: /ui/${name}`]);
    reply.header('cache-control', 'no-cache').header('etag', a.etag);
    if (req.headers['if-none-match'] === a.etag) return reply.code(304).send();
    return reply.type(a.type).send(a.body);
  };
  for (const name of [...Object.keys(OWN_FILES), VENDOR_NAME]) app.get(`/ui/${name}`, { config: open }, serve(name));

  // Who the page is talking as: decides the login prompt and whether controls are drawn (the API
  // still checks every call; hiding a button is for the reader, not the security).
  app.get('/ui/session', async (req, reply) => {
    securityHeaders(reply).header('cache-control', 'no-store');
    return { name: req.principal.name, role: req.principal.role, auth: opts.auth };
  });
  app.get('/ui/history', async (_req, reply) => {
    securityHeaders(reply).header('cache-control', 'no-store');
    const h = opts.data?.history;
    return { intervalMs: h?.intervalMs ?? null, points: h ? await h.view() : [] };
  });
  app.get('/ui/links', async (_req, reply) => {
    securityHeaders(reply).header('cache-control', 'no-store');
    return (await opts.data?.links?.()) ?? {};
  });
}
