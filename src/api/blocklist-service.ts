/**
 * What the blocklist endpoints do, apart from HTTP: validate a request into a spec, put / remove /
 * batch / preview against the store, audit each change, kick the engine after one, and say what
 * the caller is answered (`Answer`: a status and a JSON body). The Fastify routes only wrap it
 * (src/api/routes/blocklist.ts), and the CLI's `--store` mode calls it directly
 * (src/cli/direct-store.ts), so both apply the same rules and give the same answers.
 *
 * Shape checks (types, unknown fields) are the routes' JSON schemas; meaning (ids, times, causes)
 * is src/model/validate.ts, here.
 */
import { BlockedItem, EVACUATE, ItemKind, WireItem, tagMatches, toWire } from '../model/item';
import { newItem } from '../model/merge';
import { AddRequest, ConflictCode, changedSince, decide } from '../model/decide';
import { isExpired } from '../model/effective';
import { scopeCovers, scopeMatches } from '../model/scope';
import { BlockSpec, ItemRef, parseBlockRequest, parseItemRef } from '../model/validate';
import { AuditSink } from '../model/audit';
import { Clock } from '../core/clock';
import { AddOutcome, BlocklistStore, ItemChangedError, outcomeOf } from '../store/store';
import { CorruptItemError } from '../store/codec';
import { SyncFacade } from '../sync/sync-port';
import { SyncView } from '../sync/view';
import { ExpiryOutcome } from '../sync/expiry';
import { badRequest } from './errors';
import { DryRunEffect, previewChange } from './dry-run';
import { LiveParts } from './listing-cache';
import { DISABLED_STATUS, createdItemSyncStatus, itemSyncStatus, itemTaskManagers } from './status-presenter';
import { capBasisOf } from '../sync/blacklist-effect';
import { chunks, mapInSlices } from './slices';

/** Most items of a batch written in one store transaction (a bigger batch is several). */
export const WRITE_CHUNK = 1000;

/** Who asks, for the audit trail and the item's createdBy/updatedBy. */
export interface Caller {
  name: string;
  from: string;
}

/** What the caller is answered: an HTTP status and a JSON body (Flink's `{errors}` on refusal). */
export interface Answer {
  status: number;
  body: unknown;
}

export interface ListFilter {
  kind?: ItemKind;
  scope?: string;
  action?: string;
  /** An application id: every item that applies to it now (its own, cluster-wide and shared blocks). */
  appliesTo?: string;
}

export interface ServiceDeps {
  store: BlocklistStore;
  sync: SyncFacade;
  clock: Clock;
  audit: AuditSink;
  /** cluster.resource-blocklist.enabled: off = items show `sync.state: disabled`. */
  enabled: boolean;
  /** One expiry pass (POST /blocklist/expire); absent = not offered. */
  expire?: () => Promise<ExpiryOutcome>;
}

/** An item as the API shows it: FLIP-224's fields, ours, live task managers and sync state. */
export type PresentedItem = WireItem & { taskManagers: string[]; sync?: unknown };

/** What a single PUT did, as its answer says it (a refusal answers `errors` and `code` instead). */
export type PutOutcome = Exclude<AddOutcome['outcome'], 'conflict'>;

const refused = (status: number, errors: string[]): Answer => ({ status, body: { errors } });

/** 201 created, 202 merged or unchanged; a refusal by its code (a merge left without a cause is the request's fault). */
const CONFLICT_STATUS: Record<ConflictCode, number> = { exists: 409, 'scope-full': 409, 'empty-cause': 400, changed: 412 };
const syncStatusOf = (view: SyncView, item: BlockedItem, now: number) => itemSyncStatus(view, item.id, now);
const statusOf = (o: AddOutcome): number => (o.outcome === 'created' ? 201 : o.outcome === 'conflict' ? CONFLICT_STATUS[o.conflict.code] : 202);

export class BlocklistService {
  constructor(private readonly d: ServiceDeps) {}

  /**
   * What an item shows that is not stored: its live task managers and its sync state. `fresh`: the
   * item was created by the write being answered (no plan holds it yet: createdItemSyncStatus);
   * `claimed`: the cap's slots earlier new items of the same answer take.
   */
  live(item: BlockedItem, fresh = false, claimed?: Set<string>): LiveParts & { taskManagers: string[] } {
    const { sync } = this.d;
    const taskManagers = itemTaskManagers(sync, item);
    const now = this.d.clock.now();
    const status = !this.d.enabled ? DISABLED_STATUS : fresh ? createdItemSyncStatus(sync.view(), item, now, claimed) : syncStatusOf(sync.view(), item, now);
    return status ? { taskManagers, sync: status } : { taskManagers };
  }

  /**
   * FLIP-224's item shape plus ours, with the live parts: toWire's fresh object, completed in place
   * (one object per answer rather than three spread copies: a PUT per request under load).
   */
  present(item: BlockedItem, fresh = false, claimed?: Set<string>): PresentedItem {
    const { taskManagers, sync } = this.live(item, fresh, claimed);
    const out: PresentedItem = Object.assign(toWire(item), { taskManagers });
    if (sync !== undefined) out.sync = sync;
    return out;
  }

  /**
   * A path's id as an item reference of this kind, or a 400. A quarantined row's id is named as it
   * is stored even when a request may not hold it (`*`, `host:8041`: store/row-rules.ts), so that
   * DELETE can remove it.
   */
  ref(raw: string, kind: ItemKind): ItemRef {
    const r = parseItemRef(raw, kind);
    if (r.ok) return r.value;
    if (this.d.store.quarantined?.().some((q) => q.id === raw)) return { id: raw, kind, node: raw };
    throw badRequest(r.errors);
  }

  /** A PUT body's meaning, or a 400 naming every problem. */
  spec(ref: ItemRef, body: unknown): BlockSpec {
    const s = parseBlockRequest(ref, body, this.d.clock.now());
    if (!s.ok) throw badRequest(s.errors);
    return s.value;
  }

  /**
   * A batch's items, validated whole: one 400 names every bad item, before anything is written.
   * In slices (slices.ts): 10,000 validations at once held the event loop.
   */
  async specs(bodies: readonly unknown[]): Promise<BlockSpec[]> {
    const now = this.d.clock.now();
    const errors: string[] = [];
    const out: BlockSpec[] = [];
    await mapInSlices(bodies, (raw, i) => {
      const ref = parseItemRef((raw as Record<string, unknown> | null)?.id);
      if (!ref.ok) return void errors.push(...ref.errors.map((e) => `item ${i}: ${e}`));
      const s = parseBlockRequest(ref.value, raw, now);
      if (!s.ok) errors.push(...s.errors.map((e) => `item ${i} (${ref.value.id}): ${e}`));
      else out.push(s.value);
    });
    if (errors.length) throw badRequest(errors);
    return out;
  }

  /** The service's clock (what GET /blocklist filters ends against). */
  now(): number {
    return this.d.clock.now();
  }

  /** Live items (an item is gone at its end, whether or not the expiry job ran), filtered. */
  async list(q: ListFilter = {}): Promise<BlockedItem[]> {
    const now = this.d.clock.now();
    return (await this.d.store.list()).filter(
      (item) => !isExpired(item, now) && (!q.kind || item.kind === q.kind) && (!q.scope || scopeMatches(item.scope, q.scope)) && (!q.action || item.action === q.action) && (!q.appliesTo || scopeCovers(item.scope, q.appliesTo)),
    );
  }

  async get(ref: ItemRef): Promise<Answer> {
    const item = await this.d.store.get(ref.id);
    if (!item || isExpired(item, this.d.clock.now())) return refused(404, [`'${ref.id}' is not blocked`]);
    return { status: 200, body: this.present(item) };
  }

  /** What YARN would see if `id` became `after` (undefined = removed); nothing is written. */
  async preview(id: string, after: BlockedItem | undefined): Promise<DryRunEffect> {
    const { store, sync, clock } = this.d;
    // Releases depend on the containers, which nothing reads while nothing is blocked.
    const containers = after?.action === EVACUATE ? await sync.containersKnown() : undefined;
    const view = sync.view();
    const effect = previewChange(await store.list(), id, after, view.applicationId, clock.now(), (n) => (n.startsWith('/') ? (view.nodes?.list ?? []).filter((x) => x.rack === n).flatMap((x) => sync.taskManagersOn(x.host)) : sync.taskManagersOn(n)), capBasisOf(view));
    if (containers?.known === false) effect.containersUnknown = containers.why;
    return effect;
  }

  /** The outcome add() would have, computed without writing (dry run): the stores' own decide(). */
  private async wouldAdd(req: AddRequest): Promise<AddOutcome> {
    return outcomeOf(decide(await this.d.store.get(req.item.id), req, req.item.created.at));
  }

  /** `cause`: the request's own, kept on a merge's line (the merged cause is bounded and may summarise it). */
  private recordAdd(o: AddOutcome, cause: string, caller: Caller, dryRun: boolean): void {
    if (this.d.audit.takes?.() === false) return this.kickAfter(o, dryRun);
    const base = { op: 'block' as const, who: caller.name, from: caller.from, dryRun };
    if (o.outcome === 'created') this.d.audit.record({ ...base, id: o.item.id, outcome: 'created', after: o.item });
    else if (o.outcome === 'merged') this.d.audit.record({ ...base, id: o.item.id, outcome: 'merged', before: o.previous, after: o.item, cause });
    else if (o.outcome === 'unchanged') this.d.audit.record({ ...base, id: o.item.id, outcome: 'unchanged', cause });
    else this.d.audit.record({ ...base, id: o.existing.id, outcome: 'conflict', before: o.existing, detail: `${o.conflict.code}: ${o.conflict.message}` });
    this.kickAfter(o, dryRun);
  }

  /** A change the store took wakes the engine. */
  private kickAfter(o: AddOutcome, dryRun: boolean): void {
    if (!dryRun && (o.outcome === 'created' || o.outcome === 'merged')) this.d.sync.kick(`${o.outcome} ${o.item.id}`);
  }

  private async add(specs: BlockSpec[], caller: Caller, dryRun: boolean, ifMatch?: string): Promise<AddOutcome[]> {
    const now = this.d.clock.now();
    const request = (s: BlockSpec): AddRequest => ({ item: newItem(s, now, { by: caller.name, from: caller.from }), allowMerge: s.allowMerge, ...(s.scopeOmitted ? { keepScope: true } : {}), ...(ifMatch !== undefined ? { ifMatch } : {}) });
    if (specs.length === 1) {
      const req = request(specs[0]);
      const o = dryRun ? await this.wouldAdd(req) : await this.d.store.add(req);
      this.recordAdd(o, req.item.cause, caller, dryRun);
      return [o];
    }
    const reqs = await mapInSlices(specs, request);
    const outcomes: AddOutcome[] = [];
    if (!dryRun) {
      // A big batch goes to the store in chunks, each one transaction: one of 10,000 rows held
      // the loop; the batch's outcomes are per item anyway (some created, some refused).
      for (const chunk of chunks(reqs, WRITE_CHUNK)) outcomes.push(...(await this.d.store.addMany(chunk)));
    } else for (const r of reqs) outcomes.push(await this.wouldAdd(r));
    await mapInSlices(outcomes, (o, i) => this.recordAdd(o, reqs[i].item.cause, caller, dryRun));
    return outcomes;
  }

  /**
   * PUT /blocklist/{nodes|taskmanagers|racks}/{id}: 201 created, 202 merged or unchanged, 409 exists.
   * The body says its `outcome` as the batch's results do: 202 alone cannot tell a merge from a
   * request that changed nothing.
   */
  async put(spec: BlockSpec, caller: Caller, dryRun: boolean, ifMatch?: string): Promise<Answer> {
    const [o] = await this.add([spec], caller, dryRun, ifMatch);
    // `code` beside `errors`: programs (the CLI's import) act on it instead of parsing prose.
    if (o.outcome === 'conflict') return { status: statusOf(o), body: { errors: [o.conflict.message], code: o.conflict.code } };
    // The answer's taskManagers: read the containers if no pass keeps them (nothing was blocked).
    const known = (await this.d.sync.containersKnown()).known;
    const body: PresentedItem & { outcome: PutOutcome; dryRun?: DryRunEffect; warnings?: string[] } = Object.assign(this.present(o.item, o.outcome === 'created'), { outcome: o.outcome });
    const warnings = known ? this.warningsFor(o.item) : [];
    if (warnings.length) body.warnings = warnings;
    if (dryRun) body.dryRun = await this.preview(o.item.id, o.item);
    return { status: statusOf(o), body };
  }

  /** POST /blocklist (a batch): per-item outcomes; the batch was validated whole by specs(). */
  async batch(specs: BlockSpec[], caller: Caller, dryRun: boolean): Promise<Answer> {
    const outcomes = await this.add(specs, caller, dryRun);
    const known = outcomes.some((o) => o.outcome !== 'conflict') && (await this.d.sync.containersKnown()).known;
    const claimed = new Set<string>();
    const results = await mapInSlices(outcomes, (o) => {
      if (o.outcome === 'conflict') return { id: o.existing.id, status: statusOf(o), outcome: o.outcome, code: o.conflict.code, errors: [o.conflict.message] };
      const warnings = known ? this.warningsFor(o.item) : [];
      return { id: o.item.id, status: statusOf(o), outcome: o.outcome, item: this.present(o.item, o.outcome === 'created', claimed), ...(warnings.length ? { warnings } : {}) };
    });
    return { status: 200, body: { results, ...(dryRun ? { dryRun: true } : {}) } };
  }

  /**
   * What an accepted block does not do that its caller may think it does: a task manager block
   * whose container does not run on the node it names (the app's containers as last read).
   */
  private warningsFor(item: BlockedItem): string[] {
    if (item.kind !== 'taskmanager' || item.containerId === undefined) return [];
    const host = this.d.sync.containerHost(item.containerId);
    if (host === item.node) return [];
    if (host !== undefined) return [`container ${item.containerId} runs on ${host}, not on ${item.node}: this block names a task manager that is not there, so nothing of it is refused or released (block ${host}/${item.containerId} instead)`];
    return [`container ${item.containerId} is not one of the application's live containers: nothing will be released (it may have ended, or belong to another application)`];
  }

  /** DELETE: 200 `{}` (or the dry run's effect), 404 when absent or already ended. */
  async remove(ref: ItemRef, caller: Caller, dryRun: boolean, ifMatch?: string): Promise<Answer> {
    const { store, clock, audit, sync } = this.d;
    // An item past its end is gone, whether or not the expiry job has purged it: 404, and neither
    // a delete nor a `removed` audit line (expiry removes and audits it).
    let current: BlockedItem | undefined;
    try {
      current = await store.get(ref.id);
    } catch (e) {
      if (e instanceof CorruptItemError && store.removeQuarantined) return this.removeQuarantined(ref.id, caller, dryRun);
      throw e;
    }
    const ended = current !== undefined && isExpired(current, clock.now());
    // If-Match: only the version the caller saw goes (checked again in the store's own delete).
    if (ifMatch !== undefined && !tagMatches(ifMatch, ended ? undefined : current)) return this.changed(ref.id, ended ? undefined : current, caller, dryRun);
    let removed: BlockedItem | undefined;
    try {
      removed = !current || ended ? undefined : dryRun ? current : await store.remove(ref.id, ifMatch);
    } catch (e) {
      if (e instanceof ItemChangedError) return this.changed(ref.id, e.current, caller, dryRun);
      throw e;
    }
    audit.record({ op: 'unblock', id: ref.id, who: caller.name, from: caller.from, outcome: removed ? 'removed' : 'not-found', before: removed, dryRun });
    if (ended && current) return refused(404, [`'${ref.id}' is not blocked (its block ended at ${new Date(current.endTimestamp).toISOString()})`]);
    if (!removed) return refused(404, [`'${ref.id}' is not blocked`]);
    if (dryRun) return { status: 200, body: { dryRun: await this.preview(ref.id, undefined) } };
    sync.kick(`removed ${ref.id}`);
    return { status: 200, body: {} };
  }

  /** 412: the caller's If-Match names a version the item no longer has (or it is gone); nothing removed. */
  private changed(id: string, current: BlockedItem | undefined, caller: Caller, dryRun: boolean): Answer {
    const c = changedSince(id, current);
    this.d.audit.record({ op: 'unblock', id, who: caller.name, from: caller.from, outcome: 'conflict', detail: `${c.code}: ${c.message}`, dryRun });
    return { status: 412, body: { errors: [c.message], code: c.code } };
  }

  /** DELETE of a row that cannot be decoded: the only way it goes (it is never enforced nor expired). */
  private async removeQuarantined(id: string, caller: Caller, dryRun: boolean): Promise<Answer> {
    const { store, audit, sync } = this.d;
    const row = dryRun ? (store.quarantined?.().find((r) => r.id === id) ?? { id, reason: 'cannot be decoded' }) : await store.removeQuarantined?.(id);
    audit.record({ op: 'unblock', id, who: caller.name, from: caller.from, outcome: row ? 'removed-quarantined' : 'not-found', detail: row?.reason, dryRun });
    if (!row) return refused(404, [`'${id}' is not blocked`]);
    if (dryRun) return { status: 200, body: { dryRun: { blacklistAdditions: [], blacklistRemovals: [], containersToRelease: [], deferred: [] } satisfies DryRunEffect } };
    sync.kick(`removed quarantined ${id}`);
    return { status: 200, body: {} };
  }

  /** POST /blocklist/expire: one pass of the expiry job, for system cron. */
  async expire(): Promise<Answer> {
    if (!this.d.expire) return refused(404, ['this sidecar runs no expiry job']);
    const out = await this.d.expire();
    if (out.outcome === 'failed') return refused(503, [`expiry pass failed: ${out.error}; nothing acknowledged, retry later`]);
    if (out.outcome === 'skipped') return refused(409, [`an expiry pass is already running (${out.reason}); retry in a moment`]);
    return { status: 200, body: { removed: out.items.map((i) => ({ ...toWire(i), taskManagers: [] })) } };
  }
}
