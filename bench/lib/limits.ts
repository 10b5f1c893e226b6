/**
 * The limits the figures are divided by, measured in the same run on the same machine:
 *  - one loopback HTTP round trip (Node's fetch, keep-alive, to a bare node:http server answering a
 *    tiny JSON body): the least any REST call can cost;
 *  - one durable SQLite commit (SqliteStore.add of one new item into a fresh file: WAL,
 *    synchronous=FULL, so an fsync per commit): the least any acknowledged write can cost.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { AddressInfo } from 'node:net';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { BlocklistStore } from '../../src/store/store';
import { nodeItem } from './items';
import { now, percentile, timeEach } from './stats';
import { tempDir } from '../../test/support/paths';

export interface Latency {
  p50: number;
  p99: number;
  samples: number;
}

export const latencyOf = (samples: readonly number[]): Latency => ({ p50: percentile(samples, 50), p99: percentile(samples, 99), samples: samples.length });

export const sumLatency = (a: Latency, b: Latency): Latency => ({ p50: a.p50 + b.p50, p99: a.p99 + b.p99, samples: Math.min(a.samples, b.samples) });

/**
 * A private temp directory on the same disk the stores use (os.tmpdir(); not tmpfs here, so fsync
 * is real), removed when the process exits (test/support's tempDir).
 */
export function benchDir(tag: string): string {
  return tempDir(`blocklist-bench-${tag}-`);
}

export async function loopbackRoundTrip(n: number): Promise<Latency> {
  const body = JSON.stringify({ ok: true });
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  try {
    // Warm the connection and the JIT; the first calls pay for the TCP handshake.
    for (let i = 0; i < 50; i++) await (await fetch(url)).text();
    return latencyOf(await timeEach(n, async () => (await fetch(url)).text()));
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

/** Durable single-item writes of `store`, one after another: latency of each and the rate. */
export async function storeWrites(store: BlocklistStore, n: number, prefix: string): Promise<{ latency: Latency; perSecond: number }> {
  const t0 = now();
  const samples = await timeEach(n, (i) => store.add({ item: nodeItem(`${prefix}${i}.limit.invalid`, Date.now()), allowMerge: false }));
  const elapsed = now() - t0;
  return { latency: latencyOf(samples), perSecond: (n * 1000) / elapsed };
}

export async function sqliteCommit(n: number): Promise<{ latency: Latency; perSecond: number }> {
  const dir = benchDir('commit');
  const store = new SqliteStore(path.join(dir, 'limit.db'));
  try {
    await storeWrites(store, Math.min(20, n), 'warm');
    return await storeWrites(store, n, 'c');
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface Limits {
  rtt: Latency;
  commit: Latency;
  /** rtt + commit, per percentile: what one acknowledged API write cannot beat. */
  write: Latency;
}

export async function measureLimits(samples: number): Promise<Limits> {
  const rtt = await loopbackRoundTrip(samples);
  const commit = (await sqliteCommit(samples)).latency;
  return { rtt, commit, write: sumLatency(rtt, commit) };
}
