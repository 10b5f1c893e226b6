/**
 * `--store sqlite:PATH`: the admin commands work on a store file when no sidecar runs. Requests
 * are answered by the REST API's own BlocklistService (src/api/blocklist-service.ts), called
 * directly (no HTTP, no Fastify), so validation, merge, dry run and error bodies are exactly the
 * sidecar's. There is no YARN here: sync states are absent and dry runs report what the effective
 * node set would become, not what YARN has now.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { ApiError } from '../api/errors';
import { sidecarStatus } from '../api/status-presenter';
import { Answer, BlocklistService, Caller } from '../api/blocklist-service';
import { createAuditSink } from '../log/audit';
import { AuditSink } from '../model/audit';
import { ItemKind, toWire } from '../model/item';
import { parseItemRef } from '../model/validate';
import { silentLogger } from '../core/logger';
import { systemClock } from '../core/clock';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { ZookeeperStore } from '../store/zookeeper/zookeeper-store';
import { BlocklistStore } from '../store/store';
import { Target, ZOOKEEPER_AUTH_ENV } from './settings';

type StoreTarget = Exclude<Target, { kind: 'server' }>;

/** ZooKeeper refused for want of credentials: say where the CLI takes them from. */
function authHint(message: string, auth: string | undefined): string {
  if (auth !== undefined || !/not authori[sz]ed|NO_AUTH|NoAuth/i.test(message)) return message;
  return `${message}; the CLI takes the digest credentials from ${ZOOKEEPER_AUTH_ENV[0]}=user:password (never from the command line)`;
}
import { StoreUnavailableError } from '../store/store';
import { CorruptItemError } from '../store/codec';
import { NoSync } from '../sync/facade';
import { ApiItem, ApiResponse, RequestOptions, Transport } from './client';
import { CliError } from './errors';
import { EXIT } from './exit-codes';

type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';
const ITEM_PATH = /^\/blocklist\/(nodes|taskmanagers|racks)\/(.+)$/;

export class DirectStoreTransport implements Transport {
  readonly direct = true;

  private constructor(
    readonly description: string,
    readonly store: BlocklistStore,
    private readonly service: BlocklistService,
    private readonly sync: NoSync,
    private readonly audit: AuditSink,
  ) {}

  /**
   * `missing`: what to do when the file does not exist. A mutating command may create it; a
   * reading one must not invent a store from a typo; a dry run previews against an empty
   * in-memory store so that it writes nothing, not even a new file.
   */
  static async open(file: string, missing: 'error' | 'create' | 'empty'): Promise<DirectStoreTransport> {
    return DirectStoreTransport.openTarget({ kind: 'sqlite', file, source: '--store' }, missing);
  }

  /**
   * A store named by --store. ZooKeeper is the shared store the sidecars of a cluster use: there is
   * no file to create or preview against, so `missing` does not apply (the root znodes are made if
   * absent, as a sidecar makes them) and a dry run reads the real store and writes nothing.
   */
  static async openTarget(target: StoreTarget, missing: 'error' | 'create' | 'empty'): Promise<DirectStoreTransport> {
    if (target.kind === 'zookeeper') {
      const description = `zookeeper:${target.quorum}${target.root}`;
      let store: BlocklistStore;
      try {
        // Short bounds: an operator at a terminal wants an answer, not a 30 s session wait.
        store = await ZookeeperStore.open({ quorum: target.quorum, root: target.root, sessionTimeoutMs: 10_000, operationTimeoutMs: 5_000, connectTimeoutMs: 5_000, ...(target.auth ? { auth: target.auth } : {}), logger: silentLogger });
      } catch (e) {
        throw new CliError(`cannot open the store ${description}: ${authHint((e as Error).message, target.auth)}`, EXIT.UNREACHABLE);
      }
      return DirectStoreTransport.around(store, description, target.auth === undefined);
    }
    const file = target.file;
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
    return DirectStoreTransport.around(store, `sqlite:${file}`, false);
  }

  private static around(store: BlocklistStore, description: string, zookeeperWithoutAuth: boolean): DirectStoreTransport {
    const auditFile = process.env.BLOCKLIST_LOG_AUDIT_FILE || undefined;
    const audit = createAuditSink(silentLogger, auditFile);
    const sync = new NoSync(true);
    const service = new BlocklistService({ store, sync, clock: systemClock, audit, enabled: true });
    const t = new DirectStoreTransport(description, store, service, sync, audit);
    t.zookeeperWithoutAuth = zookeeperWithoutAuth;
    return t;
  }

  /** A ZooKeeper store opened without digest credentials: a refusal says where they go. */
  private zookeeperWithoutAuth = false;

  /** Who the audit trail names for a direct change: the operating-system user, on this host. */
  private readonly caller: Caller = { name: os.userInfo().username || 'cli', from: `${os.hostname()} (--store)` };

  async request(method: Method, path: string, opts: RequestOptions = {}): Promise<ApiResponse> {
    try {
      return await this.answer(method, path, opts);
    } catch (e) {
      if (e instanceof ApiError) return { status: e.status, body: { errors: e.errors } };
      if (e instanceof StoreUnavailableError) return { status: 503, body: { errors: [`blocklist store unavailable: ${this.zookeeperWithoutAuth ? authHint(e.message, undefined) : e.message}`] } };
      if (e instanceof CorruptItemError) return { status: 409, body: { errors: [`${e.message}; it is quarantined (not enforced): unblock it to remove it, then block again`], code: 'quarantined' } };
      throw e;
    }
  }

  /** The service call a REST request stands for (the paths client.ts writes). */
  private async answer(method: Method, path: string, opts: RequestOptions): Promise<Answer> {
    const svc = this.service;
    const dryRun = opts.query?.dryRun === 'true';
    const item = ITEM_PATH.exec(path);
    if (item) {
      const raw = decodeURIComponent(item[2]);
      const kind = item[1] === 'nodes' ? 'node' : item[1] === 'racks' ? 'rack' : 'taskmanager';
      // An id no request may name is only ever a quarantined row's, which a store learns by reading
      // its rows: a sidecar has read them long before, a store just opened has not.
      if (!parseItemRef(raw, kind).ok) await this.store.list();
      const ref = svc.ref(raw, kind);
      if (method === 'GET') return svc.get(ref);
      if (method === 'PUT') return svc.put(svc.spec(ref, opts.body), this.caller, dryRun, opts.ifMatch);
      if (method === 'DELETE') return svc.remove(ref, this.caller, dryRun, opts.ifMatch);
    }
    if (path === '/blocklist' && method === 'GET') {
      const q = opts.query ?? {};
      const items = await svc.list({ ...(q.kind ? { kind: q.kind as ItemKind } : {}), ...(q.scope ? { scope: q.scope } : {}), ...(q.action ? { action: q.action } : {}), ...(q.appliesTo ? { appliesTo: q.appliesTo } : {}) });
      return { status: 200, body: Object.fromEntries(items.map((i) => [i.id, svc.present(i)])) };
    }
    if (path === '/blocklist' && method === 'POST') {
      if (!Array.isArray(opts.body)) return { status: 400, body: { errors: ['body must be array'] } };
      return svc.batch(await svc.specs(opts.body), this.caller, dryRun);
    }
    if (path === '/status' && method === 'GET') return { status: 200, body: sidecarStatus(this.sync.view(), systemClock.now()) };
    return { status: 404, body: { errors: [`${method} ${path} needs a running sidecar; drop --store`] } };
  }

  /** The store's idempotent removeExpired, with an audit record per removed item (as the sidecar's job writes). */
  async expire(now: number): Promise<ApiItem[]> {
    const removed = await this.store.removeExpired(now);
    for (const item of removed) this.audit.record({ op: 'expire', id: item.id, who: 'cli', from: 'blocklist expire', outcome: 'removed', before: item });
    return removed.map((i) => ({ ...toWire(i), taskManagers: [] }));
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}
