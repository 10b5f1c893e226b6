/**
 * Helpers of the fault suite: a real sidecar (in-process or as a child process that can be
 * SIGKILLed) wired to the YARN simulator over loopback HTTP, with fast sync timings so faults
 * show and heal within a second or two.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { MemoryAudit } from '../../src/model/audit';
import { Clock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { cliMain } from '../support/paths';
import { listeningUrl } from '../support/child-sidecar';
import { tempDir } from '../support/sidecar';
import { pollUntil } from '../support/wait';

/** Timings that make a fault visible and its healing quick (all bounded, all loopback). */
export const FAST_SYNC: Record<string, string> = {
  'cluster.resource-blocklist.poll-interval': '50 ms',
  'cluster.resource-blocklist.retry.initial-backoff': '20 ms',
  'cluster.resource-blocklist.retry.max-backoff': '200 ms',
  'cluster.resource-blocklist.yarn.request-timeout': '400 ms',
  'cluster.resource-blocklist.yarn.refresh-interval': '200 ms',
  'cluster.resource-blocklist.max-blocked-fraction': '1',
  'cluster.resource-blocklist.evacuation.timeout': '0 s',
  'rest.rate-limit.max-mutations': '0',
  'log.level': 'warn',
};

export interface YarnSidecar extends Sidecar {
  dir: string;
  db: string;
  audit: MemoryAudit;
}

export async function startYarnSidecar(o: { rm: string; proxy: string; define?: Record<string, string>; clock?: Clock; dir?: string }): Promise<YarnSidecar> {
  const dir = o.dir ?? tempDir('blocklist-fault-');
  const db = path.join(dir, 'blocklist.db');
  const config = loadConfig({
    env: {},
    dynamic: { 'rest.port': '0', 'cluster.resource-blocklist.store.sqlite.path': db, 'yarn.resourcemanager.webapp.address': o.rm, 'cluster.resource-blocklist.amrm-proxy.address': o.proxy, ...FAST_SYNC, ...o.define },
  });
  const audit = new MemoryAudit();
  const s = await startSidecar({ config, audit, logger: silentLogger, ...(o.clock ? { clock: o.clock } : {}) });
  return Object.assign(s, { dir, db, audit });
}

/** Polls `cond` every 10 ms until it holds; fails after `ms` with `what`. */
export const waitFor = (what: string, cond: () => boolean | Promise<boolean>, ms = 5000): Promise<number> => pollUntil(what, cond, ms);

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface ChildSidecar {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
}

/** `blocklist sidecar` as a separate process (so it can be SIGKILLed), on the given store file. */
export async function spawnSidecar(db: string, rm: string, proxy: string, define: Record<string, string> = {}): Promise<ChildSidecar> {
  const flags = Object.entries({ 'rest.port': '0', 'cluster.resource-blocklist.store.sqlite.path': db, 'yarn.resourcemanager.webapp.address': rm, 'cluster.resource-blocklist.amrm-proxy.address': proxy, ...FAST_SYNC, 'log.format': 'json', ...define }).map(([k, v]) => `-D${k}=${v}`);
  const child = spawn(process.execPath, [cliMain, 'sidecar', ...flags], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, BLOCKLIST_CONFIG_FILE: '', CONTAINER_ID: '' } });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const { url } = await listeningUrl(child);
  return { child, url, exited };
}
