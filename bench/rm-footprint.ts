/**
 * RM footprint: the requests and bytes per second one sidecar sends the ResourceManager, idle at
 * 1,000 and 10,000 nodes and while 10 nodes are blocked and one evacuates. The simulator runs in a
 * process of its own; a counting proxy (lib/rm-tap.ts) sits between the sidecar and the RM face
 * only (the AMRM proxy is local to the AM and costs the RM nothing).
 *
 * Method: start, let the first reads happen (start-up is paid once per job), then count every RM
 * call over a window (60 s in the full run) and divide by its length. Goal: ≤ 1 KB/s per sidecar at
 * 10,000 nodes, idle and with 10 nodes blocked and one evacuating, so 1,000 jobs cost the RM ≤ 1 MB/s.
 */
import * as path from 'node:path';
import { silentLogger } from '../src/core/logger';
import { sidecarConfigForSimulator } from '../src/quickstart/local-cluster';
import { startSidecar } from '../src/sidecar/sidecar';
import { BENCH_DEFINES, putNode } from './lib/harness';
import { benchDir } from './lib/limits';
import { Row, SectionResult, emptyResult } from './lib/report';
import { RmTap } from './lib/rm-tap';
import { startSimChild } from './lib/sim-child';
import { sleep } from './lib/stats';
import { loopDelayRows } from './rm-loop-delay';
import { ZkCluster, zookeeperUnavailableReason } from '../test/support/zookeeper';
import { Sidecar } from '../src/sidecar/sidecar';

export interface RmFootprintSizes {
  nodeCounts: number[];
  /** Sidecars sharing one ZooKeeper store (each a job), measured idle at the largest node count. */
  sidecarCounts: number[];
  containers: number;
  /** Counting window per scenario. */
  windowMs: number;
  /** Warm-up before counting (the start-up reads). */
  warmupMs: number;
}

const GOAL_BYTES_PER_S = 1024;

interface Scenario {
  name: string;
  nodes: number;
  busy: boolean;
}

/** The simulator's i-th host (its names are zero-padded to at least 4 digits, 5 at 10,000 nodes). */
const simHost = (i: number, nodes: number): string => `node${String(i).padStart(Math.max(4, String(nodes).length), '0')}.sim.local`;

/** The default yarn.nodes.refresh-interval, to which the node list's bytes are scaled. */
const DEFAULT_NODES_REFRESH_S = 600;

/** Waits until the tap has seen no RM call for `quietMs` (start-up reads done), bounded. */
async function settle(tap: RmTap, quietMs: number, maxMs: number): Promise<void> {
  const until = Date.now() + maxMs;
  let last = tap.total().requests;
  let quietSince = Date.now();
  while (Date.now() < until) {
    await sleep(100);
    const n = tap.total().requests;
    if (n !== last) {
      last = n;
      quietSince = Date.now();
    } else if (Date.now() - quietSince >= quietMs) return;
  }
}

interface Measured {
  rps: number;
  /** Bytes/s with the node list's share scaled to the default 10-minute refresh. */
  bps: number;
  detail: string;
  /** N sidecars: the ZooKeeper server's client connections with all of them running (its `cons` answer). */
  zkConnections?: number;
  /** N sidecars: how long starting them one after the other took, and the process's RSS after the window. */
  startMs?: number;
  rssMb?: number;
}

/**
 * Counts one window. The node list is re-read every yarn.nodes.refresh-interval (10 min by
 * default), longer than any window: the bench sets that interval to half the window so the reads
 * show up, and scales their bytes back to the default (× interval / 600 s). Everything else is
 * counted as it comes.
 */
function countWindow(tap: RmTap, seconds: number, nodesRefreshS: number): Measured {
  const total = tap.total();
  // The whole list and the single nodes read instead of it both follow yarn.nodes.refresh-interval.
  const refreshed = ['nodes', 'node'].reduce((b, k) => b + (tap.counts.get(k as 'nodes' | 'node')?.bytes ?? 0), 0);
  const scaled = (total.bytes - refreshed + (refreshed * nodesRefreshS) / DEFAULT_NODES_REFRESH_S) / seconds;
  const detail = [...tap.counts.entries()]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .map(([k, c]) => `${k} ${c.requests}× ${(c.bytes / 1024).toFixed(1)} KB`)
    .join(', ');
  return { rps: total.requests / seconds, bps: scaled, detail: detail || 'no RM calls' };
}

/** After the warm-up and once start-up reads have settled (no RM call for 1 s), one counted window. */
async function steadyWindow(tap: RmTap, sizes: RmFootprintSizes, nodesRefreshS: number): Promise<Measured> {
  await sleep(sizes.warmupMs);
  await settle(tap, 1000, 60_000);
  tap.reset();
  const t0 = Date.now();
  await sleep(sizes.windowMs);
  return countWindow(tap, (Date.now() - t0) / 1000, nodesRefreshS);
}

async function measure(s: Scenario, sizes: RmFootprintSizes): Promise<Measured> {
  const sim = await startSimChild({ nodes: s.nodes, containers: sizes.containers, tickMs: 500 });
  const tap = new RmTap(sim.url);
  await tap.start();
  const dir = benchDir('rm-footprint');
  // Idle, nothing reads the list: keep the default interval (the idle counts follow it too).
  const nodesRefreshS = s.busy ? Math.max(1, Math.round(sizes.windowMs / 2000)) : DEFAULT_NODES_REFRESH_S;
  const config = sidecarConfigForSimulator(sim.url, path.join(dir, 'b.db'), {
    ...BENCH_DEFINES,
    'yarn.resourcemanager.webapp.address': tap.url.replace(/^http:\/\//, ''),
    'cluster.resource-blocklist.max-blocked-fraction': '0.5',
    'cluster.resource-blocklist.yarn.nodes.refresh-interval': `${nodesRefreshS} s`,
  });
  const sidecar = await startSidecar({ config, logger: silentLogger, env: {} });
  try {
    if (s.busy) {
      for (let i = 1; i <= 10; i++) await putNode(sidecar.url, simHost(i, s.nodes), { action: 'MARK_BLOCKED', cause: 'bench' });
      // One node evacuates with a long grace period, so the evacuation is in progress all window long.
      await putNode(sidecar.url, simHost(11, s.nodes), { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'bench', evacuationTimeout: 3600 });
    }
    return await steadyWindow(tap, sizes, nodesRefreshS);
  } finally {
    await sidecar.close();
    await tap.close();
    await sim.close();
  }
}

/**
 * n sidecars (n jobs) on one ZooKeeper store, all reading the RM through the tap, with 10 nodes
 * blocked for the whole cluster (so every one of them needs the node states): what the RM pays for
 * the whole group. With yarn.cluster-state.shared one of them reads the cluster state and the
 * others take it from ZooKeeper.
 */
async function measureMany(n: number, nodes: number, sizes: RmFootprintSizes, zk: ZkCluster): Promise<Measured> {
  const sim = await startSimChild({ nodes, containers: sizes.containers, tickMs: 500 });
  const tap = new RmTap(sim.url);
  await tap.start();
  const dir = benchDir('rm-footprint-many');
  const root = `/bench-many-${process.pid}-${n}-${Date.now()}`;
  const nodesRefreshS = Math.max(1, Math.round(sizes.windowMs / 2000));
  const sidecars: Sidecar[] = [];
  const started = Date.now();
  try {
    for (let i = 0; i < n; i++) {
      const config = sidecarConfigForSimulator(sim.url, path.join(dir, `unused-${i}.db`), {
        ...BENCH_DEFINES,
        'cluster.resource-blocklist.store.type': 'zookeeper',
        'cluster.resource-blocklist.store.zookeeper.quorum': zk.connectString(),
        'cluster.resource-blocklist.store.zookeeper.root': root,
        'cluster.resource-blocklist.max-blocked-fraction': '0.5',
        'cluster.resource-blocklist.yarn.nodes.refresh-interval': `${nodesRefreshS} s`,
        'yarn.resourcemanager.webapp.address': tap.url.replace(/^http:\/\//, ''),
      });
      sidecars.push(await startSidecar({ config, logger: silentLogger, env: {} }));
    }
    const startMs = Date.now() - started;
    for (let i = 1; i <= 10; i++) await putNode(sidecars[0].url, simHost(i, nodes), { action: 'MARK_BLOCKED', cause: 'bench' });
    const measured = await steadyWindow(tap, sizes, nodesRefreshS);
    // Counted at the server after the window, every sidecar still running: with sharing on, one
    // session per sidecar (store, watch, election and shared readings on one connection).
    return { ...measured, zkConnections: (await zk.connections()).count, startMs, rssMb: process.memoryUsage().rss / 2 ** 20 };
  } finally {
    for (const s of sidecars) await s.close();
    await tap.close();
    await sim.close();
  }
}

/** The N-sidecar scenarios alone (exported so they can be run without the rest of the section). */
export async function benchMany(sizes: RmFootprintSizes, out: SectionResult): Promise<void> {
  const nodes = Math.max(...sizes.nodeCounts);
  const why = zookeeperUnavailableReason();
  if (why) {
    out.skipped.push({ section: 'rm-footprint', figure: 'N sidecars on one ZooKeeper store', reason: why });
    return;
  }
  const zk = await ZkCluster.start(1);
  try {
    // One sidecar alone on the store (it leads) is the fixed cost of the group; each further sidecar
    // adds the slope. Projection to 1,000 jobs: total(1) + 999 × (total(N) − total(1)) / (N − 1).
    const one = await measureMany(1, nodes, sizes, zk);
    for (const n of sizes.sidecarCounts) {
      const r = await measureMany(n, nodes, sizes, zk);
      const slope = Math.max(0, (r.bps - one.bps) / (n - 1));
      const projected = one.bps + 999 * slope;
      out.rows.push({
        section: 'rm-footprint',
        figure: `RM bytes/s, ${n} sidecars on one ZooKeeper store, 10 nodes blocked cluster-wide, ${nodes.toLocaleString('en')} nodes (all of them)`,
        value: r.bps,
        unit: 'B/s',
        limit: GOAL_BYTES_PER_S * n,
        limitUnit: 'B/s',
        limitWhat: `${n} × 1 KB/s`,
        ratio: r.bps / (GOAL_BYTES_PER_S * n),
        goal: '≤ 1×',
        met: r.bps <= GOAL_BYTES_PER_S * n,
        note: `${r.rps.toFixed(2)} req/s: ${r.detail}; one sidecar alone on the store ${one.bps.toFixed(0)} B/s (${one.detail})`,
      });
      if (r.zkConnections !== undefined) {
        // ZooKeeper refuses a client address past maxClientCnxns (60 by default): at two sessions
        // per sidecar, 30 sidecars on one host were the ceiling.
        out.rows.push({
          section: 'rm-footprint',
          figure: `ZooKeeper connections per sidecar, ${n} sidecars with yarn.cluster-state.shared on one server (its cons answer: ${r.zkConnections} in all)`,
          value: r.zkConnections / n,
          unit: 'connections',
          limit: 1,
          limitUnit: 'connections',
          limitWhat: 'one session per sidecar',
          ratio: r.zkConnections / n,
          goal: '≤ 1×',
          met: r.zkConnections <= n,
          note: `${n} sidecars in one process on 127.0.0.1: ${r.zkConnections} of ZooKeeper's default maxClientCnxns of 60 per client address; started one after the other in ${((r.startMs ?? 0) / 1000).toFixed(1)} s; process RSS ${(r.rssMb ?? 0).toFixed(0)} MB after the window`,
        });
      }
      out.rows.push({
        section: 'rm-footprint',
        figure: `RM bytes/s projected to 1,000 jobs on one store (from 1 and ${n} sidecars), ${nodes.toLocaleString('en')} nodes`,
        value: projected,
        unit: 'B/s',
        limit: GOAL_BYTES_PER_S * 1024,
        limitUnit: 'B/s',
        limitWhat: '1 MB/s',
        ratio: projected / (GOAL_BYTES_PER_S * 1024),
        goal: '≤ 1×',
        met: projected <= GOAL_BYTES_PER_S * 1024,
        note: `total(1) + 999 × (total(${n}) − total(1)) / ${n - 1}: each sidecar past the first adds ${slope.toFixed(1)} B/s`,
      });
    }
  } finally {
    await zk.stop();
  }
}

export async function benchRmFootprint(sizes: RmFootprintSizes): Promise<SectionResult> {
  const out = emptyResult();
  const maxNodes = Math.max(...sizes.nodeCounts);
  out.rows.push(...(await loopDelayRows(maxNodes)));
  const scenarios: Scenario[] = [
    ...sizes.nodeCounts.map((n) => ({ name: `idle, ${n.toLocaleString('en')} nodes`, nodes: n, busy: false })),
    { name: `10 blocked + 1 evacuating, ${Math.max(...sizes.nodeCounts).toLocaleString('en')} nodes`, nodes: Math.max(...sizes.nodeCounts), busy: true },
  ];
  for (const s of scenarios) {
    const r = await measure(s, sizes);
    const idleAtMax = !s.busy && s.nodes === Math.max(...sizes.nodeCounts);
    const row: Row = {
      section: 'rm-footprint',
      figure: `RM bytes/s, one sidecar ${s.name}`,
      value: r.bps,
      unit: 'B/s',
      limit: GOAL_BYTES_PER_S,
      limitUnit: 'B/s',
      limitWhat: '1 KB/s (1,000 jobs ≤ 1 MB/s)',
      ratio: r.bps / GOAL_BYTES_PER_S,
      // Idle at the largest size, and blocks in force there (#31.8: single-node reads, not the list).
      goal: idleAtMax || s.busy ? '≤ 1×' : 'context',
      met: idleAtMax || s.busy ? r.bps <= GOAL_BYTES_PER_S : undefined,
      note: `${r.rps.toFixed(2)} req/s over ${(sizes.windowMs / 1000).toFixed(0)} s: ${r.detail}`,
    };
    out.rows.push(row);
  }
  if (sizes.sidecarCounts.length) await benchMany(sizes, out);
  out.notes.push(
    `rm-footprint: after the start-up reads settle (no RM call for 1 s), one window is counted; the node list's refresh (yarn.nodes.refresh-interval, 10 min by default) is set to half the window (${Math.max(1, Math.round(sizes.windowMs / 2000))} s) so its reads show, and its bytes are scaled back to the 10-minute default; every other call is counted as it comes. Projection to 1,000 jobs: total(1 sidecar) + 999 × (total(N) − total(1)) / (N − 1).`,
  );
  out.notes.push(`rm-footprint: window ${sizes.windowMs / 1000} s after a ${sizes.warmupMs / 1000} s warm-up; the simulator in its own process; counted at a proxy in front of the RM face only.`);
  return out;
}
