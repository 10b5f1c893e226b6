/**
 * A sidecar wired to the YARN simulator over real loopback HTTP (as src/quickstart/local-cluster.ts
 * does), with the bench's knobs, plus an in-process tap on what the simulated AMRM proxy receives:
 * "the proxy received the addition" is timed where SimCluster.updateBlacklist runs, not by polling
 * the proxy over HTTP (which would add its own round trips to the figure).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { silentLogger } from '../../src/core/logger';
import { RunningSimulator, SimulatorOptions, startSimulator } from '../../src/sim/server';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { sidecarConfigForSimulator } from '../../src/quickstart/local-cluster';
import { benchDir } from './limits';
import { startSimChild } from './sim-child';
import { now } from './stats';

type Waiter = { host: string; kind: 'add' | 'remove'; resolve: (t: number) => void; timer: NodeJS.Timeout };

/** Records when each host was added to / removed from the simulated AM's blacklist. */
export class ProxyTap {
  private waiters: Waiter[] = [];
  /** Every updateBlacklist the proxy received: sizes only (payload per push). */
  readonly pushes: { additions: number; removals: number; at: number }[] = [];

  constructor(sim: RunningSimulator) {
    const cluster = sim.cluster;
    const original = cluster.updateBlacklist.bind(cluster);
    // The AMRM route calls cluster.updateBlacklist on the instance, so an own property wraps it.
    cluster.updateBlacklist = (additions: string[], removals: string[]) => {
      const r = original(additions, removals);
      const t = now();
      if (r.ok) {
        this.pushes.push({ additions: additions.length, removals: removals.length, at: t });
        if (this.waiters.length) this.settle(new Set(additions), new Set(removals), t);
      }
      return r;
    };
  }

  private settle(added: Set<string>, removed: Set<string>, t: number): void {
    this.waiters = this.waiters.filter((w) => {
      const hit = w.kind === 'add' ? added.has(w.host) && !removed.has(w.host) : removed.has(w.host);
      if (hit) {
        clearTimeout(w.timer);
        w.resolve(t);
      }
      return !hit;
    });
  }

  /** Resolves with the receive time (performance.now()) of the host's next addition/removal; register before acting. */
  next(host: string, kind: 'add' | 'remove', timeoutMs = 30_000): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.timer !== timer);
        reject(new Error(`the proxy did not receive the ${kind === 'add' ? 'addition' : 'removal'} of ${host} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push({ host, kind, resolve, timer });
    });
  }
}

export interface BenchClusterOptions {
  sim: SimulatorOptions;
  /** -D style overrides of the sidecar's config. */
  define?: Record<string, string>;
  /** SQLite file; a fresh temp file when absent (ignored for a ZooKeeper store). */
  sqlitePath?: string;
}

export interface BenchCluster {
  sim: RunningSimulator;
  sidecar: Sidecar;
  tap: ProxyTap;
  sqlitePath: string;
  close(): Promise<void>;
}

/** Settings every bench sidecar shares: no rate limit (it would cap throughput), no cron noise, quiet logs. */
export const BENCH_DEFINES: Record<string, string> = {
  'rest.port': '0',
  'rest.rate-limit.max-mutations': '0',
  'log.level': 'error',
  // The cron job only tidies expired items; the benches create none, so keep it out of the way.
  'cluster.resource-blocklist.expiry.cron': '0 0 1 1 *',
};

/** A sidecar wired to a simulator in another process (no tap: nothing is timed at the proxy). */
export interface RemoteBenchCluster {
  simUrl: string;
  sidecar: Sidecar;
  close(): Promise<void>;
}

export async function startRemoteBenchCluster(o: BenchClusterOptions): Promise<RemoteBenchCluster> {
  const sim = await startSimChild(o.sim);
  const dir = benchDir('sidecar');
  try {
    const config = sidecarConfigForSimulator(sim.url, path.join(dir, 'blocklist.db'), { ...BENCH_DEFINES, ...o.define });
    const sidecar = await startSidecar({ config, logger: silentLogger, env: {} });
    return {
      simUrl: sim.url,
      sidecar,
      async close() {
        await sidecar.close();
        await sim.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

export async function startBenchCluster(o: BenchClusterOptions): Promise<BenchCluster> {
  const sim = await startSimulator({ port: 0, seed: 7, tickMs: 0, ...o.sim });
  const tap = new ProxyTap(sim);
  const dir = o.sqlitePath ? undefined : benchDir('sidecar');
  const sqlitePath = o.sqlitePath ?? path.join(dir as string, 'blocklist.db');
  try {
    const config = sidecarConfigForSimulator(sim.url, sqlitePath, { ...BENCH_DEFINES, ...o.define });
    const sidecar = await startSidecar({ config, logger: silentLogger, env: {} });
    return {
      sim,
      sidecar,
      tap,
      sqlitePath,
      async close() {
        await sidecar.close();
        await sim.close();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await sim.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/** PUT /blocklist/nodes/{host}; throws unless the status is the expected one. */
export async function putNode(base: string, host: string, body: Record<string, unknown>, expect: number[] = [201, 202]): Promise<number> {
  const res = await fetch(`${base}/blocklist/nodes/${encodeURIComponent(host)}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!expect.includes(res.status)) throw new Error(`PUT ${host}: ${res.status} ${text}`);
  return res.status;
}

export async function deleteNode(base: string, host: string): Promise<void> {
  const res = await fetch(`${base}/blocklist/nodes/${encodeURIComponent(host)}`, { method: 'DELETE' });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`DELETE ${host}: ${res.status} ${text}`);
}
