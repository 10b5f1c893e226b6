/**
 * The load generator of the throughput bench, in a worker thread so the clients' own CPU runs on
 * the other core instead of stealing the sidecar's event loop. `concurrency` clients each send PUTs
 * back to back over keep-alive connections until `durationMs` is up.
 *
 * node:http, not Node's fetch: measured on the 2-core bench VM against a server that answers 201 at
 * once, fetch tops out at about 3,600 requests/s with 32 clients (2,800 with 8) with its thread at
 * 100 % CPU, below the sidecar's own rate, so the bench measured the client; node:http with a
 * keep-alive agent does 18,600/s (28,800 with 8). `ceiling` runs the same clients against such a
 * server so every run states how far the generator itself could go.
 */
import * as http from 'node:http';
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

/** One PUT over the agent's keep-alive sockets; resolves with the status and the body's text. */
function put(agent: http.Agent, base: URL, path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: base.hostname, port: base.port, method: 'PUT', path, agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
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
  const base = new URL(job.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.concurrency });
  const t0 = performance.now();
  const end = t0 + job.durationMs;
  const endBase = Date.now() + 3_600_000;
  const client = async (k: number): Promise<void> => {
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
        const res = await put(agent, base, `${base.pathname.replace(/\/$/, '')}/blocklist/nodes/${host}`, JSON.stringify(body));
        const text = res.text;
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
  agent.destroy();
  return { ok, failed, statuses, elapsedMs: performance.now() - t0, ...(firstError ? { firstError } : {}) };
}

if (parentPort) {
  const port = parentPort;
  run(workerData as LoadJob).then(
    (r) => port.postMessage(r),
    (e: unknown) => port.postMessage({ ok: 0, failed: 1, statuses: {}, elapsedMs: 0, firstError: String(e) } satisfies LoadResult),
  );
}
