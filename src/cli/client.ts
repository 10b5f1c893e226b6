/**
 * The admin commands' view of the REST API (README.md, REST API): typed calls over a Transport, and the one
 * place where HTTP outcomes become exit codes (409 → 3, 404 → 4, no answer → 5, 400 → 2).
 * Two transports: HTTP to a sidecar (axios, here) and in-process on an SQLite file
 * (direct-store.ts), so every command behaves the same in both modes.
 */
import type { DetectorView } from '../detect/detector';
import axios, { AxiosInstance } from 'axios';
import type { ConfigEntry } from '../config/config';
import { CliError } from './errors';
import { EXIT } from './exit-codes';

export interface ApiResponse {
  status: number;
  body: unknown;
}

export interface RequestOptions {
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** HTTP If-Match: change the item only if it is still this version (model/item wireTag); else 412. */
  ifMatch?: string;
}

export interface Transport {
  /** For messages: "http://127.0.0.1:8090" or "sqlite:data/blocklist.db". */
  readonly description: string;
  readonly direct: boolean;
  request(method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, opts?: RequestOptions): Promise<ApiResponse>;
  /** One expiry pass done locally (store mode); absent = ask the server. */
  expire?(now: number): Promise<ApiItem[]>;
  close(): Promise<void>;
}

// ---- wire types (what the server sends; timestamps are strings of digits) ----

export type { EvacuationPhase } from '../sync/sync-port';

// The wire shapes of /status, an item's sync state and a dry run are the server's own types.
import type { EvacuationStatus } from '../sync/sync-port';
import type { ItemSyncStatus, SidecarStatus } from '../api/status-presenter';
import type { DryRunEffect } from '../api/dry-run';
import type { PutOutcome } from '../api/blocklist-service';
import type { ConflictCode } from '../model/decide';
import type { WireItem } from '../model/item';
export type { EvacuationStatus as WireEvacuation, ItemSyncStatus as WireSync, SidecarStatus, DryRunEffect };

/** The stamps an older sidecar may leave out of an item it answers. */
type Stamps = 'createdBy' | 'createdFrom' | 'createdAt' | 'updatedBy' | 'updatedFrom' | 'updatedAt';

/** An item as a sidecar answers it: the wire item (model/item.ts, its stamps optional) and what an answer adds. */
export interface ApiItem extends Omit<WireItem, Stamps>, Partial<Pick<WireItem, Stamps>> {
  taskManagers?: string[];
  sync?: ItemSyncStatus;
  dryRun?: DryRunEffect;
  /** A PUT's answer only: what the request did (a 202 is either a merge or nothing at all). */
  outcome?: PutOutcome;
  /** A PUT's answer: what the accepted block does not do that the caller may expect. */
  warnings?: string[];
}

export interface BatchResult {
  id: string;
  status: number;
  outcome: string;
  /** Why a block was refused, for programs: exists, empty-cause (src/model/decide.ts). */
  code?: ConflictCode;
  item?: ApiItem;
  errors?: string[];
  /** What the accepted block does not do that the caller may expect. */
  warnings?: string[];
}

export interface BlockBody {
  action: string;
  cause: string;
  timeout?: string;
  endTimestamp?: string;
  allowMerge?: boolean;
  /** Seconds (a number), or a duration with a unit: the API refuses a bare number above a day. */
  evacuationTimeout?: number | string;
  scope?: string;
  source?: string;
}

export type BatchItem = BlockBody & { id: string };

export interface ListFilter {
  kind?: string;
  scope?: string;
  action?: string;
  /** Every item that applies to this application now: its own, cluster-wide and shared blocks. */
  appliesTo?: string;
}

// ---- HTTP transport ----

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ERR_SOCKET_CONNECTION_TIMEOUT']);

export class HttpTransport implements Transport {
  readonly direct = false;
  private readonly http: AxiosInstance;

  constructor(
    readonly description: string,
    token: string | undefined,
    timeoutMs = 15_000,
  ) {
    this.http = axios.create({
      baseURL: description,
      timeout: timeoutMs,
      // Status codes are outcomes here (409 = exists, 404 = not blocked), not exceptions.
      validateStatus: () => true,
      // Keep the body as text: the permanent endTimestamp must stay the exact string it was sent as.
      transformResponse: [(d: unknown) => d],
      responseType: 'text',
      headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      proxy: false,
      maxRedirects: 0,
    });
  }

  async request(method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, opts: RequestOptions = {}): Promise<ApiResponse> {
    try {
      const res = await this.http.request<string>({
        method,
        url: path,
        params: opts.query,
        data: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        // A request without a body carries no content type: left to itself axios labels a body-less
        // POST application/x-www-form-urlencoded, which the sidecar refuses with 415.
        headers: { 'content-type': opts.body === undefined ? false : 'application/json', ...(opts.ifMatch !== undefined ? { 'if-match': opts.ifMatch } : {}) },
      });
      let body: unknown = undefined;
      if (typeof res.data === 'string' && res.data.length) {
        try {
          body = JSON.parse(res.data);
        } catch {
          body = res.data;
        }
      }
      return { status: res.status, body };
    } catch (e) {
      const code = (e as { code?: string }).code;
      const why = code && NETWORK_CODES.has(code) ? code : (e as Error).message;
      throw new CliError(
        `cannot reach the sidecar at ${this.description} (${why}); start it with 'blocklist sidecar', point --server (or BLOCKLIST_SERVER) at it, or use --store sqlite:PATH`,
        EXIT.UNREACHABLE,
      );
    }
  }

  async close(): Promise<void> {}
}

// ---- typed calls ----

const enc = (id: string) => encodeURIComponent(id);

/** The REST path of an item: a task manager's '/' travels as %2F. */
export function itemPath(id: string): string {
  if (id.startsWith('/')) return `/blocklist/racks/${enc(id)}`;
  return id.includes('/') ? `/blocklist/taskmanagers/${enc(id)}` : `/blocklist/nodes/${enc(id)}`;
}

export function errorsOf(body: unknown): string[] {
  if (body && typeof body === 'object' && Array.isArray((body as { errors?: unknown }).errors)) {
    return ((body as { errors: unknown[] }).errors).map(String);
  }
  if (typeof body === 'string' && body.trim()) return [body.trim().slice(0, 300)];
  return [];
}

/** The machine-readable reason of a refused block (`code` beside `errors`), if the body has one. */
export function codeOf(body: unknown): string | undefined {
  const code = body && typeof body === 'object' ? (body as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

export class BlocklistClient {
  constructor(readonly transport: Transport) {}

  get description(): string {
    return this.transport.description;
  }

  /** Turns a non-2xx answer into a CliError with the right exit code and a hint. */
  fail(res: ApiResponse, what: string): never {
    const errs = errorsOf(res.body);
    const first = errs[0] ?? `HTTP ${res.status}`;
    const rest = errs.slice(1);
    switch (res.status) {
      case 400:
        throw new CliError(`${what}: ${first}`, EXIT.USAGE, rest);
      case 401:
        throw new CliError(`${what}: the sidecar wants a token (${first}); pass --token-file FILE or set BLOCKLIST_TOKEN`, EXIT.ERROR);
      case 403:
        throw new CliError(`${what}: not allowed (${first}); this needs a token with the admin role`, EXIT.ERROR);
      case 404:
        throw new CliError(`${what}: ${first}`, EXIT.NOT_FOUND, rest);
      case 409:
        // The server speaks API ("set allowMerge"); the operator types flags. Told by the code.
        if (codeOf(res.body) === 'exists') throw new CliError(`${what}: already blocked; add --merge to merge into it`, EXIT.CONFLICT, rest);
        throw new CliError(`${what}: ${first}`, EXIT.CONFLICT, rest);
      case 412:
        throw new CliError(`${what}: ${first}`, EXIT.CONFLICT, rest);
      case 503:
        throw new CliError(`${what}: the sidecar cannot do this now: ${first}`, EXIT.ERROR, rest);
      default:
        throw new CliError(`${what}: the sidecar answered ${res.status}: ${first}`, EXIT.ERROR, rest);
    }
  }

  private async ok<T>(method: 'GET' | 'PUT' | 'POST' | 'DELETE', path: string, what: string, opts?: RequestOptions): Promise<{ status: number; body: T }> {
    const res = await this.transport.request(method, path, opts);
    if (res.status < 200 || res.status > 299) this.fail(res, what);
    return res as { status: number; body: T };
  }

  async list(filter: ListFilter = {}): Promise<Record<string, ApiItem>> {
    return (await this.ok<Record<string, ApiItem>>('GET', '/blocklist', 'cannot list the blocklist', { query: { ...filter } })).body;
  }

  async get(id: string): Promise<ApiItem> {
    return (await this.ok<ApiItem>('GET', itemPath(id), `cannot show '${id}'`)).body;
  }

  /** 201 created, 202 merged or unchanged (the body's `outcome` tells which). */
  async block(id: string, body: BlockBody, dryRun: boolean): Promise<{ status: number; body: ApiItem }> {
    return this.ok<ApiItem>('PUT', itemPath(id), `cannot block '${id}'`, { body, query: dryRun ? { dryRun: 'true' } : undefined });
  }

  async unblock(id: string, dryRun: boolean): Promise<{ dryRun?: DryRunEffect }> {
    return (await this.ok<{ dryRun?: DryRunEffect }>('DELETE', itemPath(id), `cannot unblock '${id}'`, { query: dryRun ? { dryRun: 'true' } : undefined })).body;
  }

  async batch(items: BatchItem[], dryRun: boolean): Promise<{ results: BatchResult[]; dryRun?: boolean }> {
    return (await this.ok<{ results: BatchResult[]; dryRun?: boolean }>('POST', '/blocklist', 'import refused, nothing was imported', { body: items, query: dryRun ? { dryRun: 'true' } : undefined })).body;
  }

  /** The running sidecar's effective configuration (secrets masked). */
  async config(): Promise<ConfigEntry[]> {
    return (await this.ok<{ config: ConfigEntry[] }>('GET', '/config', "cannot read the sidecar's configuration")).body.config;
  }

  /** The failure detector's view (GET /detector): `{mode:"off"}` when it does not run. */
  async detector(): Promise<DetectorView | { mode: 'off'; why?: string }> {
    return (await this.ok<DetectorView | { mode: 'off'; why?: string }>('GET', '/detector', "cannot read the detector's state")).body;
  }

  /** GET /status; `nodes` adds the cluster's nodes as last read (the cap's basis). */
  async status(opts: { nodes?: boolean } = {}): Promise<SidecarStatus> {
    return (await this.ok<SidecarStatus>('GET', '/status', 'cannot read the sidecar status', opts.nodes ? { query: { nodes: 'true' } } : undefined)).body;
  }
}

