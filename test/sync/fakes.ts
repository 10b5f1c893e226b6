import { SyncSettings } from '../../src/sync/engine';
/**
 * In-memory fakes of the sync engine's edges: a tiny YARN (RM reader + AMRM proxy over one model
 * of nodes, containers and a blacklist that the "scheduler" honours), a store that can be made
 * unreachable, and item builders. The engine sees only the interfaces, so the same tests run
 * against the simulator over HTTP in engine.sim.test.ts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BlockAction, BlockedItem, CLUSTER_SCOPE, EVACUATE, MARK_BLOCKED, PERMANENT } from '../../src/model/item';
import { AddOutcome, AddRequest, BlocklistStore, StoreUnavailableError } from '../../src/store/store';
import { SqliteStore } from '../../src/store/sqlite-store';
import { AmrmProxy, AppContainer, ApplicationInfo, AttemptInfo, BlacklistChange, BlacklistView, CompletedContainersPage, AttemptSummary, ClusterInfo, ClusterMetrics, ClusterNode, NodeState, ReleaseResult, ResourceManagerReader, YarnCallError } from '../../src/yarn/types';
import { countNodeStates } from '../../src/yarn/node-counts';

export const APP = 'application_1652313600000_0001';
export const attemptOf = (n: number): string => `appattempt_1652313600000_0001_${String(n).padStart(6, '0')}`;
export const containerOf = (attempt: number, n: number): string => `container_e01_1652313600000_0001_${String(attempt).padStart(2, '0')}_${String(n).padStart(6, '0')}`;

export interface ItemOpts {
  action?: BlockAction;
  start?: number;
  end?: number;
  scope?: string;
  evacuationTimeout?: number;
  evacuationSince?: number;
  cause?: string;
}

export function nodeItem(host: string, o: ItemOpts = {}): BlockedItem {
  const start = o.start ?? 1_652_313_600_000;
  const action = o.action ?? MARK_BLOCKED;
  const it: BlockedItem = {
    id: host,
    kind: 'node',
    node: host,
    action,
    startTimestamp: start,
    endTimestamp: o.end ?? PERMANENT,
    cause: o.cause ?? 'test',
    scope: o.scope ?? CLUSTER_SCOPE,
    created: { by: 'test', from: 'test', at: start },
    updated: { by: 'test', from: 'test', at: start },
  };
  if (o.evacuationTimeout !== undefined) it.evacuationTimeout = o.evacuationTimeout;
  if (action === EVACUATE) it.evacuationSince = o.evacuationSince ?? start;
  return it;
}

export function tmItem(host: string, containerId: string, o: ItemOpts = {}): BlockedItem {
  const it = nodeItem(host, o);
  return { ...it, id: `${host}/${containerId}`, kind: 'taskmanager', containerId };
}

/** A store over a temp SQLite file that can be switched off (every call then throws StoreUnavailableError). */
export class FlakyStore implements BlocklistStore {
  down = false;
  readonly inner: SqliteStore;
  readonly description = 'flaky:sqlite';
  private readonly dir: string;

  constructor() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sync-test-'));
    this.inner = new SqliteStore(path.join(this.dir, 'blocklist.db'));
  }

  private check(): void {
    if (this.down) throw new StoreUnavailableError('store is down (test)');
  }
  async add(req: AddRequest): Promise<AddOutcome> {
    this.check();
    return this.inner.add(req);
  }
  async addMany(reqs: AddRequest[]): Promise<AddOutcome[]> {
    this.check();
    return this.inner.addMany(reqs);
  }
  async get(id: string): Promise<BlockedItem | undefined> {
    this.check();
    return this.inner.get(id);
  }
  async list(): Promise<BlockedItem[]> {
    this.check();
    return this.inner.list();
  }
  async remove(id: string): Promise<BlockedItem | undefined> {
    this.check();
    return this.inner.remove(id);
  }
  async removeExpired(now: number): Promise<BlockedItem[]> {
    this.check();
    return this.inner.removeExpired(now);
  }
  async version(): Promise<string> {
    this.check();
    return this.inner.version();
  }
  /** Writes (or replaces) an item as-is. */
  async put(item: BlockedItem): Promise<void> {
    await this.inner.remove(item.id);
    const o = await this.inner.add({ item, allowMerge: false });
    if (o.outcome !== 'created') throw new Error(`put ${item.id}: ${o.outcome}`);
  }
  async close(): Promise<void> {
    await this.inner.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

interface FakeContainer {
  id: string;
  host: string;
  state: string;
}

/**
 * A small YARN: nodes, the app's containers, the AM's blacklist. `release` removes a container
 * (or marks it RELEASING) and places a replacement like Flink would ask for one, on the least
 * loaded RUNNING host not on the blacklist.
 */
export class FakeYarn implements AmrmProxy, ResourceManagerReader {
  readonly nodeStates = new Map<string, NodeState>();
  readonly live = new Map<string, FakeContainer>();
  blacklistSet = new Set<string>();
  attemptNo = 1;
  proxyDown = false;
  rmDown = false;
  /** 'drop': a released container disappears at once; 'releasing': it stays listed as RELEASING. */
  releaseMode: 'drop' | 'releasing' = 'drop';
  /** The next release is applied but its answer never arrives (a timeout after the AM acted). */
  loseNextReleaseResponse = false;
  /** Whether a release places a replacement container elsewhere. */
  replace = true;
  readonly updates: { additions: string[]; removals: string[] }[] = [];
  readonly releaseCalls: string[][] = [];
  /** Every container id ever released, in order (duplicates would show a double release). */
  readonly releasedIds: string[] = [];
  private seq = 1;

  constructor(hosts: number | string[] = 10) {
    const list = typeof hosts === 'number' ? Array.from({ length: hosts }, (_, i) => `node${i + 1}`) : hosts;
    for (const h of list) this.nodeStates.set(h, 'RUNNING');
  }

  addContainers(host: string, n: number): string[] {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const id = containerOf(this.attemptNo, ++this.seq);
      this.live.set(id, { id, host, state: 'RUNNING' });
      ids.push(id);
    }
    return ids;
  }

  containersOn(host: string): string[] {
    return [...this.live.values()].filter((c) => c.host === host && c.state === 'RUNNING').map((c) => c.id).sort();
  }

  /** The AM restarts: a new attempt whose AMRMClient starts with an empty blacklist. */
  newAttempt(inherit = false): void {
    this.attemptNo++;
    if (!inherit) this.blacklistSet = new Set();
  }

  private proxyCall(): void {
    if (this.proxyDown) throw new YarnCallError('connect ECONNREFUSED (test: proxy down)');
  }
  private rmCall(): void {
    if (this.rmDown) throw new YarnCallError('connect ECONNREFUSED (test: RM down)');
  }

  // --- AmrmProxy ---
  async attempt(): Promise<AttemptInfo> {
    this.proxyCall();
    return { applicationId: APP, appAttemptId: attemptOf(this.attemptNo), registered: true };
  }
  async blacklist(): Promise<BlacklistView> {
    this.proxyCall();
    const hosts = [...this.blacklistSet].sort();
    return { blacklist: hosts, owners: hosts.length > 0 ? { blocklist: hosts } : {} };
  }
  async updateBlacklist({ additions, removals }: BlacklistChange): Promise<void> {
    this.proxyCall();
    if (additions.includes('*')) throw new YarnCallError('Cannot add * to the blacklist!', 400, false);
    this.updates.push({ additions: [...additions], removals: [...removals] });
    for (const h of additions) this.blacklistSet.add(h);
    for (const h of removals) this.blacklistSet.delete(h); // removal wins (YARN's rule)
  }
  async containers(): Promise<AppContainer[]> {
    this.proxyCall();
    return [...this.live.values()].map((c) => ({ containerId: c.id, nodeId: `${c.host}:8041`, host: c.host, state: c.state }));
  }
  async completedContainers(after: number): Promise<CompletedContainersPage> {
    this.proxyCall();
    return { containers: [], next: after };
  }
  async release(ids: string[]): Promise<ReleaseResult> {
    this.proxyCall();
    const lose = this.loseNextReleaseResponse;
    this.loseNextReleaseResponse = false;
    this.releaseCalls.push([...ids]);
    const released: string[] = [];
    const unknown: string[] = [];
    for (const id of ids) {
      const c = this.live.get(id);
      if (!c || c.state !== 'RUNNING') {
        unknown.push(id);
        continue;
      }
      released.push(id);
      this.releasedIds.push(id);
      if (this.releaseMode === 'drop') this.live.delete(id);
      else c.state = 'RELEASING';
      if (this.replace) this.placeReplacement();
    }
    if (lose) throw new YarnCallError('socket hang up (test: the release went through, its answer was lost)');
    return { released, unknown };
  }

  private placeReplacement(): void {
    const load = new Map<string, number>();
    for (const [h, s] of this.nodeStates) if (s === 'RUNNING' && !this.blacklistSet.has(h)) load.set(h, 0);
    for (const c of this.live.values()) if (load.has(c.host)) load.set(c.host, (load.get(c.host) ?? 0) + 1);
    const best = [...load.entries()].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))[0];
    if (best) this.addContainers(best[0], 1);
  }

  // --- ResourceManagerReader ---
  async clusterInfo(): Promise<ClusterInfo> {
    this.rmCall();
    return { state: 'STARTED', haState: 'ACTIVE' };
  }
  async clusterMetrics(): Promise<ClusterMetrics> {
    this.rmCall();
    return countNodeStates([...this.nodeStates].map(([, state]) => ({ state })));
  }
  async nodes(): Promise<ClusterNode[]> {
    this.rmCall();
    const count = new Map<string, number>();
    for (const c of this.live.values()) if (c.state === 'RUNNING') count.set(c.host, (count.get(c.host) ?? 0) + 1);
    return [...this.nodeStates].map(([host, state]) => ({ id: `${host}:8041`, host, rack: '/default-rack', state, healthReport: '', numContainers: count.get(host) ?? 0 }));
  }
  async application(appId: string): Promise<ApplicationInfo> {
    this.rmCall();
    return { id: appId, state: 'RUNNING', currentAppAttemptId: attemptOf(this.attemptNo) };
  }
  async attempts(): Promise<AttemptSummary[]> {
    this.rmCall();
    return [{ appAttemptId: attemptOf(this.attemptNo) }];
  }
}

/** Engine settings for tests: exact timing (no jitter), defaults otherwise. */
export const TEST_SETTINGS: SyncSettings = {
  pollIntervalMs: 1000,
  maxBlockedFraction: 1,
  evacuationTimeoutMs: 0,
  releaseBatchSize: 500,
  refreshIntervalMs: 10_000,
  statusLogIntervalMs: 20_000,
  fullResyncIntervalMs: 300_000,
  initialBackoffMs: 200,
  maxBackoffMs: 5_000,
  backoffJitter: 0,
};
