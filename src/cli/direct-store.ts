/**
 * `--store sqlite:PATH`: the admin commands work on a store file when no sidecar runs. Rather than
 * re-implementing the API's rules, this builds the real REST API in-process on that store and
 * injects requests into it (fastify inject, no socket), so validation, merge, dry run and error
 * bodies are exactly the sidecar's. There is no YARN here: sync states are absent and dry runs
 * report what the effective node set would become, not what YARN has now.
 */
import * as fs from 'node:fs';
import { FastifyInstance } from 'fastify';
import { buildApi } from '../api/server';
import { createAuditSink } from '../log/audit';
import { AuditSink } from '../model/audit';
import { toWire } from '../model/item';
import { silentLogger } from '../core/logger';
import { systemClock } from '../core/clock';
import { SqliteStore } from '../store/sqlite-store';
import { StoreUnavailableError } from '../store/store';
import { NoSync } from '../sync/facade';
import { ApiItem, ApiResponse, RequestOptions, Transport } from './client';
import { CliError } from './errors';
import { EXIT } from './exit-codes';

export class DirectStoreTransport implements Transport {
  readonly direct = true;

  private constructor(
    readonly description: string,
    readonly store: SqliteStore,
    private readonly app: FastifyInstance,
    private readonly audit: AuditSink,
  ) {}

  /**
   * `missing`: what to do when the file does not exist. A mutating command may create it; a
   * reading one must not invent a store from a typo; a dry run previews against an empty
   * in-memory store so that it writes nothing, not even a new file.
   */
  static async open(file: string, missing: 'error' | 'create' | 'empty'): Promise<DirectStoreTransport> {
    const exists = fs.existsSync(file);
    if (!exists && missing === 'error') {
      throw new CliError(`no store file at ${file}; check the path given to --store (a block or import creates it)`, EXIT.NOT_FOUND);
    }
    let store: SqliteStore;
    try {
      store = new SqliteStore(!exists && missing === 'empty' ? ':memory:' : file);
    } catch (e) {
      const msg = e instanceof StoreUnavailableError ? e.message : (e as Error).message;
      throw new CliError(`cannot open the store ${file}: ${msg}`, EXIT.UNREACHABLE);
    }
    // The audit trail of direct changes goes where the sidecar would put it, if configured.
    const auditFile = process.env.BLOCKLIST_LOG_AUDIT_FILE || undefined;
    const audit = createAuditSink(silentLogger, auditFile);
    // No network here: the request limit only guards a server's memory against clients, so an
    // import batch of the API's largest size (10,000 items) must fit whatever its causes.
    const app = buildApi({ store, sync: new NoSync(true), clock: systemClock, logger: silentLogger, audit, enabled: true, bodyLimit: 64 * 1024 * 1024 });
    await app.ready();
    return new DirectStoreTransport(`sqlite:${file}`, store, app, audit);
  }

  async request(method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, opts: RequestOptions = {}): Promise<ApiResponse> {
    const query: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) query[k] = v;
    const res = await this.app.inject({
      method,
      url: path,
      query,
      payload: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      headers: opts.body === undefined ? {} : { 'content-type': 'application/json' },
    });
    let body: unknown = undefined;
    if (res.body) {
      try {
        body = JSON.parse(res.body);
      } catch {
        body = res.body;
      }
    }
    return { status: res.statusCode, body };
  }

  /** The store's idempotent removeExpired, with an audit record per removed item (as the sidecar's job writes). */
  async expire(now: number): Promise<ApiItem[]> {
    const removed = await this.store.removeExpired(now);
    for (const item of removed) this.audit.record({ op: 'expire', id: item.id, who: 'cli', from: 'blocklist expire', outcome: 'removed', before: item });
    return removed.map((i) => ({ ...toWire(i), taskManagers: [] }));
  }

  async close(): Promise<void> {
    await this.app.close();
    await this.store.close();
  }
}
