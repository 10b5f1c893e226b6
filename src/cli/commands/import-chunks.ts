/**
 * The import's writes, in chunks through the batch endpoint. Any size the parser accepts: the
 * items go in chunks (CHUNK_ITEMS items and CHUNK_BYTES of JSON at most, so they fit a sidecar's
 * default request limit; a chunk a sidecar still refuses with 413 is split in two and sent again —
 * a 413 writes nothing). Each chunk is all or nothing (the server validates a batch whole); when a
 * later chunk fails, the error says how many items — the first N of the file, up to which host —
 * were imported, so `--merge` can finish the job. With --store there is no network: the batches
 * are the API's largest (10,000 items, one SQLite transaction each), so a file of up to 10,000
 * hosts is imported all or nothing.
 */
import { BatchItem, BatchResult, BlocklistClient } from '../client';
import { CliError } from '../errors';
import { EXIT } from '../exit-codes';

/** Items per chunk sent to a sidecar, and the JSON size a chunk stays under (the default request limit is 1 MiB). */
export const CHUNK_ITEMS = 1_000;
export const CHUNK_BYTES = 256 * 1024;
/** With --store (in-process, no request limit that matters): the API's largest batch. */
const DIRECT_CHUNK_ITEMS = 10_000;

/** Consecutive runs of items within the count and size bounds. */
function chunksOf(items: BatchItem[], maxItems: number, maxBytes: number): BatchItem[][] {
  const out: BatchItem[][] = [];
  let cur: BatchItem[] = [];
  let bytes = 2;
  for (const it of items) {
    const size = JSON.stringify(it).length + 1;
    if (cur.length && (cur.length >= maxItems || bytes + size > maxBytes)) {
      out.push(cur);
      cur = [];
      bytes = 2;
    }
    cur.push(it);
    bytes += size;
  }
  if (cur.length) out.push(cur);
  return out;
}

/** A 413 from the batch endpoint, told apart so the chunk can be split. */
class TooLarge extends Error {}

/** Raised when a chunk after the first failed: what was imported before it. */
class PartialImport extends Error {
  constructor(
    readonly failure: CliError,
    readonly imported: BatchResult[],
    readonly total: number,
  ) {
    super(failure.message);
  }
}

/**
 * One batch call per chunk, in file order. A 413 (nothing written) splits the chunk in two. A
 * failure after some chunks were written raises PartialImport (only for real writes: a dry run
 * writes nothing either way).
 */
export async function batchInChunks(client: BlocklistClient, items: BatchItem[], dryRun: boolean): Promise<BatchResult[]> {
  const direct = !!client.transport.direct;
  const queue = direct ? chunksOf(items, DIRECT_CHUNK_ITEMS, Number.MAX_SAFE_INTEGER) : chunksOf(items, CHUNK_ITEMS, CHUNK_BYTES);
  const results: BatchResult[] = [];
  while (queue.length) {
    const chunk = queue.shift() as BatchItem[];
    let res: { results: BatchResult[] };
    try {
      res = await batchCall(client, chunk, dryRun);
    } catch (e) {
      if (e instanceof TooLarge && chunk.length > 1) {
        const half = Math.ceil(chunk.length / 2);
        queue.unshift(chunk.slice(0, half), chunk.slice(half));
        continue;
      }
      const err = e instanceof TooLarge ? new CliError(`${e.message}; nothing of this chunk was imported`, EXIT.ERROR) : e;
      if (!dryRun && results.length && err instanceof CliError) throw new PartialImport(err, results, items.length);
      throw err;
    }
    results.push(...res.results);
  }
  return results;
}

async function batchCall(client: BlocklistClient, items: BatchItem[], dryRun: boolean): Promise<{ results: BatchResult[] }> {
  const res = await client.transport.request('POST', '/blocklist', { body: items, query: dryRun ? { dryRun: 'true' } : undefined });
  if (res.status === 413) throw new TooLarge(`one host's item alone is larger than the sidecar accepts (413)`);
  if (res.status < 200 || res.status > 299) client.fail(res, 'import refused, nothing of this chunk was imported');
  return res.body as { results: BatchResult[] };
}

/** The real write, with a partial failure explained. */
export async function importChunks(client: BlocklistClient, items: BatchItem[]): Promise<BatchResult[]> {
  try {
    return await batchInChunks(client, items, false);
  } catch (e) {
    if (!(e instanceof PartialImport)) throw e;
    const n = e.imported.length;
    const last = e.imported[n - 1]?.id ?? '';
    throw new CliError(
      `${e.failure.message} — ${n} of ${e.total} item(s) were imported before this (the first ${n} of the file, up to '${last}'), the other ${e.total - n} were not; re-run with --merge to import the rest`,
      e.failure.code,
      e.failure.details,
    );
  }
}
