/**
 * The load generator of the throughput bench, in a worker thread so the clients' own CPU runs on
 * the other core instead of stealing the sidecar's event loop. `concurrency` clients each send PUTs
 * back to back, each over its own keep-alive connection, until `durationMs` is up.
 *
 * The clients are lib/raw-http.ts (one socket each, a request written as one string, the answer
 * read by its Content-Length): on the 2-core bench VM the generator shares the machine with the
 * sidecar it measures. Node's fetch topped out at about 3,600 requests/s with 32 clients, below the
 * sidecar's own rate; node:http with a keep-alive agent did 18,600/s but cost 40-55 µs of CPU per
 * request, a fifth of the machine at 7,000 PUTs/s; the raw client costs about a quarter of that.
 * `ceiling` runs the same clients against a server that answers at once, so every run states how
 * far the generator itself could go.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { RawHttpConnection } from './raw-http';

export interface LoadJob {
  url: string;
  concurrency: number;
  durationMs: number;
  /** 'new': a fresh host per request (201); 'merge': each client merges into its own ids (202). */
  mode: 'new' | 'merge';
  /** Hosts of the merge mode, already blocked; client k uses ids k, k+C, k+2C, … */
  mergeHosts: string[];
  prefix: string;
}

export interface LoadResult {
  ok: number;
  failed: number;
  statuses: Record<string, number>;
  elapsedMs: number;
  /** How long the generator's thread was busy (event-loop utilisation's active time), ms. */
  busyMs: number;
  firstError?: string;
}

async function run(job: LoadJob): Promise<LoadResult> {
  const statuses: Record<string, number> = {};
  let ok = 0;
  let failed = 0;
  let firstError: string | undefined;
  const base = new URL(job.url);
  const prefix = base.pathname.replace(/\/$/, '');
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  const end = t0 + job.durationMs;
  const endBase = Date.now() + 3_600_000;
  const connections: RawHttpConnection[] = [];
  const client = async (k: number): Promise<void> => {
    const conn = new RawHttpConnection(base.hostname, Number(base.port));
    connections.push(conn);
    let seq = 0;
    const mine = job.mergeHosts.filter((_, i) => i % job.concurrency === k);
    while (performance.now() < end) {
      seq++;
      let host: string;
      let body: Record<string, unknown>;
      if (job.mode === 'new') {
        host = `${job.prefix}-${k}-${seq}.bench.invalid`;
        body = { action: 'MARK_BLOCKED', cause: 'bench throughput' };
      } else {
        host = mine[seq % mine.length];
        // A later end every time: the merge changes the item, so each request is a durable write.
        body = { action: 'MARK_BLOCKED', cause: 'bench throughput', endTimestamp: String(endBase + seq), allowMerge: true };
      }
      try {
        const res = await conn.request('PUT', `${prefix}/blocklist/nodes/${host}`, JSON.stringify(body));
        const text = res.body;
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        const want = job.mode === 'new' ? 201 : 202;
        if (res.status === want) ok++;
        else {
          failed++;
          firstError ??= `${res.status} ${text.slice(0, 200)}`;
        }
      } catch (e) {
        failed++;
        firstError ??= (e as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: job.concurrency }, (_, k) => client(k)));
  for (const c of connections) c.close();
  return { ok, failed, statuses, elapsedMs: performance.now() - t0, busyMs: performance.eventLoopUtilization(elu0).active, ...(firstError ? { firstError } : {}) };
}

if (parentPort) {
  const port = parentPort;
  run(workerData as LoadJob).then(
    (r) => port.postMessage(r),
    (e: unknown) => port.postMessage({ ok: 0, failed: 1, statuses: {}, elapsedMs: 0, busyMs: 0, firstError: String(e) } satisfies LoadResult),
  );
}
