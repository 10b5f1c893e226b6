/**
 * Helpers of the security suite: a sidecar with a token file, TLS or a rate limit, whose log lines
 * are captured (to prove no secret reaches them) and whose audit is kept in memory.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import winston from 'winston';
import { loadConfig } from '../../src/config/config';
import { MemoryAudit } from '../../src/model/audit';
import { Logger } from '../../src/core/logger';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { repoRoot } from '../support/paths';
import { tempDir } from '../support/sidecar';

export const ADMIN_TOKEN = 'adm1n-T0ken-0123456789abcdefXYZ';
export const VIEWER_TOKEN = 'v1ewer-T0ken-0123456789abcdefXYZ';
/** Listed in the file only as its SHA-256 (the "sha256:" form). */
export const HASHED_TOKEN = 'hashed-T0ken-0123456789abcdefXYZ';
export const SECOND_ADMIN_TOKEN = 'adm1n2-T0ken-0123456789abcdefXYZ';

export const fixture = (name: string): string => path.join(repoRoot, 'test', 'security', 'fixtures', name);

export function tokenFileText(hashOfHashed: string): string {
  return [
    'tokens:',
    `  "${ADMIN_TOKEN}": { name: alice, role: admin }`,
    `  "${SECOND_ADMIN_TOKEN}": { name: carol, role: admin }`,
    `  "${VIEWER_TOKEN}": { name: grafana, role: viewer }`,
    `  "sha256:${hashOfHashed}": { name: bob, role: admin }`,
    '',
  ].join('\n');
}

/** A logger that keeps every line it writes (JSON), for "secrets never logged" checks. */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  const logger = winston.createLogger({ level: 'debug', format: winston.format.combine(winston.format.timestamp(), winston.format.json()), transports: [new winston.transports.Stream({ stream })] });
  return { logger, lines };
}

export interface SecuredSidecar extends Sidecar {
  dir: string;
  audit: MemoryAudit;
  logLines: string[];
}

export async function startSecuredSidecar(define: Record<string, string>, dir = tempDir('blocklist-sec-')): Promise<SecuredSidecar> {
  const config = loadConfig({ dynamic: { 'rest.port': '0', 'cluster.resource-blocklist.store.sqlite.path': path.join(dir, 'blocklist.db'), ...define } });
  const audit = new MemoryAudit();
  const { logger, lines } = capturingLogger();
  const s = await startSidecar({ config, logger, audit });
  return Object.assign(s, { dir, audit, logLines: lines });
}

export function writeTokenFile(dir: string, text: string, mode = 0o600): string {
  const f = path.join(dir, 'tokens.yaml');
  fs.writeFileSync(f, text, { mode });
  fs.chmodSync(f, mode);
  return f;
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
