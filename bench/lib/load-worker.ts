/**
 * The load generator of the throughput bench, in a worker thread so the clients' own CPU (fetch,
 * JSON) runs on the other core instead of stealing the sidecar's event loop. `concurrency` clients
 * each send PUTs back to back over keep-alive connections (Node's fetch) until `durationMs` is up.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';

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
  firstError?: string;
}

async function run(job: LoadJob): Promise<LoadResult> {
  const statuses: Record<string, number> = {};
  let ok = 0;
  let failed = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const end = t0 + job.durationMs;
  const endBase = Date.now() + 3_600_000;
  const client = async (k: number): Promise<void> => {
    let seq = 0;
    while (performance.now() < end) {
      seq++;
      let host: string;
      let body: Record<string, unknown>;
      if (job.mode === 'new') {
        host = `${job.prefix}-${k}-${seq}.bench.invalid`;
        body = { action: 'MARK_BLOCKED', cause: 'bench throughput' };
      } else {
        const mine = job.mergeHosts.filter((_, i) => i % job.concurrency === k);
        host = mine[seq % mine.length];
        // A later end every time: the merge changes the item, so each request is a durable write.
        body = { action: 'MARK_BLOCKED', cause: 'bench throughput', endTimestamp: String(endBase + seq), allowMerge: true };
      }
      try {
        const res = await fetch(`${job.url}/blocklist/nodes/${host}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        const text = await res.text();
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
  return { ok, failed, statuses, elapsedMs: performance.now() - t0, ...(firstError ? { firstError } : {}) };
}

if (parentPort) {
  const port = parentPort;
  run(workerData as LoadJob).then(
    (r) => port.postMessage(r),
    (e: unknown) => port.postMessage({ ok: 0, failed: 1, statuses: {}, elapsedMs: 0, firstError: String(e) } satisfies LoadResult),
  );
}
