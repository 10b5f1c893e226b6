/**
 * 1. Propagation: how long from a block (or unblock) until the AMRM proxy receives it.
 *  - API path: PUT / DELETE through the sidecar's REST API; the API kicks the engine at once.
 *    Limit = one loopback HTTP round trip + one durable SQLite commit (measured in this run).
 *    Goal: p99 ≤ 5× the limit.
 *  - Poll path: another writer (a second SQLite connection on the same file, as the CLI's direct
 *    mode or another process) adds an item; the engine sees it when it polls store.version() every
 *    poll-interval. Each write waits a random part of the interval first so the samples cover every
 *    phase of the poll tick. Goal: p99 ≤ interval + 5× the limit.
 *  - ZooKeeper watch: a second ZooKeeperStore client writes; the sidecar's store watch fires.
 *    Limit = one loopback round trip + one ZooKeeper write (quorum-acked, fsync'd), measured alone
 *    in this run. Goal: p99 ≤ 5× the limit. Skipped (with the reason) when ZooKeeper cannot run.
 * Receive time is taken in-process where the simulator applies the update (harness.ts ProxyTap).
 */
import { SqliteStore } from '../src/store/sqlite/sqlite-store';
import { ZookeeperStore } from '../src/store/zookeeper/zookeeper-store';
import { silentLogger } from '../src/core/logger';
import { MARK_BLOCKED } from '../src/model/item';
import { ZkCluster, zookeeperUnavailableReason } from '../test/support/zookeeper';
import { BenchCluster, deleteNode, putNode, startBenchCluster } from './lib/harness';
import { nodeItem, outsideHost } from './lib/items';
import { Latency, Limits, latencyOf, storeWrites, sumLatency } from './lib/limits';
import { Row, SectionResult, emptyResult } from './lib/report';
import { now, sleep, until } from './lib/stats';

export interface PropagationSizes {
  /** Block+unblock pairs through the API (≥ 1,000 for the published figures). */
  apiBlocks: number;
  /** External-writer blocks per poll interval, e.g. { 100: 300, 1000: 50 }. */
  pollBlocks: Record<number, number>;
  /** Block+unblock pairs through a ZooKeeper writer; 0 = skip. */
  zkBlocks: number;
  warmup: number;
}

const SECTION = 'propagation';

function latencyRows(figure: string, lat: Latency, limit: Latency, limitWhat: string, extraMs: number, goalFactor: number, goal: string): Row[] {
  // Same-percentile limit: the path's p50 against the limit's p50, its p99 against the limit's p99.
  return (['p50', 'p99'] as const).map((p) => {
    const lim = extraMs + limit[p];
    const met = p === 'p99' ? lat.p99 <= extraMs + goalFactor * limit.p99 : undefined;
    return {
      section: SECTION,
      figure: `${figure} ${p} (n=${lat.samples})`,
      value: lat[p],
      unit: 'ms',
      limit: lim,
      limitUnit: 'ms',
      limitWhat: `${extraMs ? `${extraMs} ms interval + ` : ''}${limitWhat} ${p}`,
      ratio: lat[p] / lim,
      goal: p === 'p99' ? goal : '–',
      met,
    };
  });
}

async function waitSynced(c: BenchCluster): Promise<void> {
  await until(() => c.sidecar.sync.synced(), 10_000, 'the first sync');
}

async function apiPath(limits: Limits, s: PropagationSizes, out: SectionResult): Promise<void> {
  // A small cluster: the pairs keep one item at a time, so the store and the cap stay small and
  // every sample measures the path, not a growing list.
  const c = await startBenchCluster({ sim: { nodes: 50, containers: 100 }, define: { 'cluster.resource-blocklist.poll-interval': '1 s' } });
  try {
    await waitSynced(c);
    const hosts = c.sim.cluster.nodes.map((n) => n.host);
    const block: number[] = [];
    const unblock: number[] = [];
    for (let i = 0; i < s.warmup + s.apiBlocks; i++) {
      const host = hosts[i % hosts.length];
      const added = c.tap.next(host, 'add');
      const t0 = now();
      await putNode(c.sidecar.url, host, { action: MARK_BLOCKED, cause: 'bench propagation' });
      const tAdd = (await added) - t0;
      const removed = c.tap.next(host, 'remove');
      const t1 = now();
      await deleteNode(c.sidecar.url, host);
      const tRemove = (await removed) - t1;
      if (i >= s.warmup) {
        block.push(tAdd);
        unblock.push(tRemove);
      }
    }
    const goal = 'p99 ≤ 5× limit';
    out.rows.push(...latencyRows('API block (PUT) → proxy', latencyOf(block), limits.write, 'RTT + SQLite commit', 0, 5, goal));
    out.rows.push(...latencyRows('API unblock (DELETE) → proxy', latencyOf(unblock), limits.write, 'RTT + SQLite commit', 0, 5, goal));
  } finally {
    await c.close();
  }
}

async function pollPath(limits: Limits, intervalMs: number, n: number, warmup: number, out: SectionResult): Promise<void> {
  const c = await startBenchCluster({ sim: { nodes: 50, containers: 100 }, define: { 'cluster.resource-blocklist.poll-interval': `${intervalMs} ms` } });
  const writer = new SqliteStore(c.sqlitePath);
  try {
    await waitSynced(c);
    const samples: number[] = [];
    for (let i = 0; i < warmup + n; i++) {
      // Hosts outside the simulated cluster are never held back by the safety cap, so the list
      // may grow without unblocking.
      const host = outsideHost(i, `poll${intervalMs}-`);
      await sleep(Math.random() * intervalMs);
      const added = c.tap.next(host, 'add', intervalMs * 5 + 30_000);
      const t0 = now();
      await writer.add({ item: nodeItem(host, Date.now()), allowMerge: false });
      const t = (await added) - t0;
      if (i >= warmup) samples.push(t);
    }
    const label = intervalMs >= 1000 ? `${intervalMs / 1000} s` : `${intervalMs} ms`;
    out.rows.push(...latencyRows(`external writer, poll ${label} → proxy`, latencyOf(samples), limits.write, 'RTT + SQLite commit', intervalMs, 5, `p99 ≤ ${label} + 5× limit`));
  } finally {
    await writer.close();
    await c.close();
  }
}

async function zkWatch(limits: Limits, s: PropagationSizes, out: SectionResult): Promise<void> {
  const why = zookeeperUnavailableReason();
  if (why) {
    out.skipped.push({ section: SECTION, figure: 'ZooKeeper watch → proxy', reason: why });
    return;
  }
  let zk: ZkCluster;
  try {
    zk = await ZkCluster.start(1);
  } catch (e) {
    out.skipped.push({ section: SECTION, figure: 'ZooKeeper watch → proxy', reason: `ZooKeeper did not start: ${(e as Error).message.slice(0, 200)}` });
    return;
  }
  const quorum = zk.connectString();
  const root = '/bench-blocklist';
  let c: BenchCluster | undefined;
  let writer: ZookeeperStore | undefined;
  try {
    writer = await ZookeeperStore.open({ quorum, root, sessionTimeoutMs: 30_000, operationTimeoutMs: 5_000, logger: silentLogger });
    // The limit's ZooKeeper half: the writer's own durable writes, alone, before the sidecar runs.
    await storeWrites(writer, 20, 'zkwarm');
    const zkWrite = (await storeWrites(writer, Math.max(50, Math.min(300, s.zkBlocks)), 'zk')).latency;
    for (const item of await writer.list()) await writer.remove(item.id);
    const limit = sumLatency(limits.rtt, zkWrite);
    c = await startBenchCluster({
      sim: { nodes: 50, containers: 100 },
      define: {
        'cluster.resource-blocklist.store.type': 'zookeeper',
        'cluster.resource-blocklist.store.zookeeper.quorum': quorum,
        'cluster.resource-blocklist.store.zookeeper.root': root,
        // Long enough that every sample is carried by the watch, not by a poll tick.
        'cluster.resource-blocklist.poll-interval': '60 s',
      },
    });
    await waitSynced(c);
    const hosts = c.sim.cluster.nodes.map((n) => n.host);
    const block: number[] = [];
    const unblock: number[] = [];
    for (let i = 0; i < s.warmup + s.zkBlocks; i++) {
      const host = hosts[i % hosts.length];
      const added = c.tap.next(host, 'add');
      const t0 = now();
      await writer.add({ item: nodeItem(host, Date.now()), allowMerge: false });
      const tAdd = (await added) - t0;
      const removed = c.tap.next(host, 'remove');
      const t1 = now();
      await writer.remove(host);
      const tRemove = (await removed) - t1;
      if (i >= s.warmup) {
        block.push(tAdd);
        unblock.push(tRemove);
      }
    }
    out.rows.push(...latencyRows('ZooKeeper watch, block → proxy', latencyOf(block), limit, 'RTT + ZooKeeper write', 0, 5, 'p99 ≤ 5× limit'));
    out.rows.push(...latencyRows('ZooKeeper watch, unblock → proxy', latencyOf(unblock), limit, 'RTT + ZooKeeper write', 0, 5, 'p99 ≤ 5× limit'));
    out.notes.push(`ZooKeeper: one standalone server from the Debian package (test/support/zookeeper.ts), forceSync on; write p50 ${zkWrite.p50.toFixed(2)} ms, p99 ${zkWrite.p99.toFixed(2)} ms.`);
  } finally {
    await c?.close();
    await writer?.close();
    await zk.stop();
  }
}

export async function benchPropagation(limits: Limits, s: PropagationSizes): Promise<SectionResult> {
  const out = emptyResult();
  await apiPath(limits, s, out);
  for (const [interval, n] of Object.entries(s.pollBlocks)) await pollPath(limits, Number(interval), n, Math.min(s.warmup, 3), out);
  if (s.zkBlocks > 0) await zkWatch(limits, s, out);
  out.notes.push(`Limit: loopback RTT p50 ${limits.rtt.p50.toFixed(3)} ms / p99 ${limits.rtt.p99.toFixed(3)} ms; SQLite durable commit p50 ${limits.commit.p50.toFixed(3)} ms / p99 ${limits.commit.p99.toFixed(3)} ms (n=${limits.rtt.samples}).`);
  return out;
}
