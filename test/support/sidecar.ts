/**
 * Test helpers: a real sidecar (real HTTP on 127.0.0.1, real SQLite file in a temp folder) and a
 * tiny JSON HTTP client. Nothing here fakes HTTP or the store.
 */
import * as path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { Clock } from '../../src/core/clock';
import { Logger, silentLogger } from '../../src/core/logger';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { MemoryAudit } from '../../src/model/audit';

export { tempDir } from './paths';
import { tempDir } from './paths';

export interface TestSidecar extends Sidecar {
  dir: string;
  audit: MemoryAudit;
}

export async function startTestSidecar(opts: { clock?: Clock; define?: Record<string, string>; dir?: string; logger?: Logger } = {}): Promise<TestSidecar> {
  const dir = opts.dir ?? tempDir();
  const config = loadConfig({
    dynamic: { 'rest.port': '0', 'cluster.resource-blocklist.store.sqlite.path': path.join(dir, 'blocklist.db'), ...opts.define },
  });
  const audit = new MemoryAudit();
  const s = await startSidecar({ config, clock: opts.clock, logger: opts.logger ?? silentLogger, audit });
  return Object.assign(s, { dir, audit });
}

export interface JsonResponse {
  status: number;
  text: string;
  body: unknown;
  headers: Headers;
}

/** One HTTP request; `body` is JSON-encoded unless it is already a string (raw payloads). */
export async function http(base: string, method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + p, init);
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, text, body: parsed, headers: res.headers };
}
