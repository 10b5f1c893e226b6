/**
 * 2. Reconcile scale: 10,000 nodes, 5,000 items, 50,000 containers, 1 % of the items replaced
 * before each pass (half removed, half new, so the list stays at 5,000).
 *  - CPU per pass of the pure computation (desired.ts planWith, its memo carried as a pass does, + diffBlacklist) and of a whole
 *    Controller.pass() against in-memory fakes of the store, the RM and the proxy (no I/O, so the
 *    figure is the engine's own CPU), with refresh-interval 0 so every pass also re-reads and
 *    re-indexes the 10,000 nodes and 50,000 containers (the heaviest pass without evacuations).
 *  - Limit: a plain Set difference of the same sizes: a Set of the 10,000 node hosts, a Set of the
 *    5,000 desired hosts, and desired − actual / actual − desired against a 5,000-host actual Set
 *    (for the whole pass also a Set of the 50,000 container ids, which the pass must index).
 *    Goal: ≤ 3×.
 *  - Push payload: additions + removals per pass against the churn. Goal: proportional to the
 *    churn (≤ one host per churned item), not to the list.
 * max-blocked-fraction is 0.6 here so all 5,000 items fit under the cap (the default 0.33 would
 * defer 1,700 of them; the cap's cost is in the figure either way).
 */
import { BlockedItem } from '../src/model/item';
import { silentLogger } from '../src/core/logger';
import { systemClock } from '../src/core/clock';
import { createMetrics } from '../src/metrics/metrics';
import { DecisionMemo, NodeView, diffBlacklist, planWith } from '../src/sync/desired';
import { Controller } from '../src/sync/controller';
import { AddOutcome, AddRequest, BlocklistStore } from '../src/store/store';
import { AmrmProxy, AppContainer, AttemptInfo, BlacklistChange, BlacklistView, CompletedContainersPage, ClusterNode, ReleaseResult, ResourceManagerReader, AttemptSummary, ApplicationInfo, ClusterInfo, ClusterMetrics } from '../src/yarn/types';
import { countNodeStates } from '../src/yarn/node-counts';
import { nodeItem } from './lib/items';
import { Row, SectionResult, emptyResult } from './lib/report';
import { cpuMs, mean } from './lib/stats';

export interface ReconcileSizes {
  nodes: number;
  items: number;
  containers: number;
  /** Fraction of the items replaced before each pass (0.01 = 1 %). */
  churn: number;
  passes: number;
  warmup: number;
}

const SECTION = 'reconcile';
const APP = 'application_1652313600000_0001';
const ATTEMPT = 'appattempt_1652313600000_0001_000001';

const pad = (i: number): string => String(i).padStart(6, '0');
const host = (i: number): string => `node${pad(i)}.bench.local`;

/** The store as a Map; list() returns a fresh array as a real store would. */
class MemoryStore implements BlocklistStore {
  readonly description = 'memory (bench)';
  readonly items = new Map<string, BlockedItem>();
  private v = 0;
  async add(req: AddRequest): Promise<AddOutcome> {
    this.items.set(req.item.id, req.item);
    this.v++;
    return { outcome: 'created', item: req.item };
  }
  async addMany(reqs: AddRequest[]): Promise<AddOutcome[]> {
    const out: AddOutcome[] = [];
    for (const r of reqs) out.push(await this.add(r));
    return out;
  }
  async get(id: string): Promise<BlockedItem | undefined> {
    return this.items.get(id);
  }
  async list(): Promise<BlockedItem[]> {
    return [...this.items.values()];
  }
  async remove(id: string): Promise<BlockedItem | undefined> {
    const it = this.items.get(id);
    if (it) {
      this.items.delete(id);
      this.v++;
    }
    return it;
  }
  async removeExpired(): Promise<BlockedItem[]> {
    return [];
  }
  async version(): Promise<string> {
    return String(this.v);
  }
  async close(): Promise<void> {}
}

class FakeRm implements ResourceManagerReader {
  constructor(private readonly list: ClusterNode[]) {}
  async clusterInfo(): Promise<ClusterInfo> {
    return { state: 'STARTED' };
  }
  async clusterMetrics(): Promise<ClusterMetrics> {
    return countNodeStates(this.list);
  }
  async nodes(): Promise<ClusterNode[]> {
    return this.list;
  }
  async application(): Promise<ApplicationInfo> {
    return { id: APP, state: 'RUNNING', currentAppAttemptId: ATTEMPT };
  }
  async attempts(): Promise<AttemptSummary[]> {
    return [{ appAttemptId: ATTEMPT }];
  }
  async containers(): Promise<AppContainer[]> {
    return [];
  }
}

class FakeProxy implements AmrmProxy {
  readonly blacklistSet = new Set<string>();
  readonly pushes: { additions: number; removals: number }[] = [];
  constructor(private readonly list: AppContainer[]) {}
  async attempt(): Promise<AttemptInfo> {
    return { applicationId: APP, appAttemptId: ATTEMPT, registered: true };
  }
  async blacklist(): Promise<BlacklistView> {
    return { blacklist: [...this.blacklistSet], owners: { blocklist: [...this.blacklistSet] } };
  }
  async updateBlacklist({ additions, removals }: BlacklistChange): Promise<void> {
    for (const a of additions) this.blacklistSet.add(a);
    for (const r of removals) this.blacklistSet.delete(r);
    this.pushes.push({ additions: additions.length, removals: removals.length });
  }
  async completedContainers(after: number): Promise<CompletedContainersPage> {
    return { containers: [], next: after };
  }
  async containers(): Promise<AppContainer[]> {
    return this.list;
  }
  async release(ids: string[]): Promise<ReleaseResult> {
    return { released: ids, unknown: [] };
  }
}

/** The item population and its churn: the oldest items leave, new ones on free hosts arrive. */
class Population {
  readonly items: BlockedItem[] = [];
  private readonly used = new Set<string>();
  private nextHost: number;
  private t = 1_700_000_000_000;
  constructor(private readonly s: ReconcileSizes) {
    if (s.items >= s.nodes) throw new Error('reconcile bench: items must be fewer than nodes');
    for (let i = 0; i < s.items; i++) {
      this.items.push(nodeItem(host(i), this.t++));
      this.used.add(host(i));
    }
    this.nextHost = s.items;
  }
  /** Replaces churn × items; returns what left and what came. */
  churn(): { gone: BlockedItem[]; came: BlockedItem[] } {
    const k = Math.max(1, Math.round(this.s.items * this.s.churn));
    const goneN = Math.ceil(k / 2);
    const gone = this.items.splice(0, goneN);
    for (const g of gone) this.used.delete(g.node);
    const came: BlockedItem[] = [];
    while (came.length < goneN) {
      const h = host(this.nextHost);
      this.nextHost = (this.nextHost + 1) % this.s.nodes;
      if (this.used.has(h)) continue; // still blocked: a new item needs a free host
      this.used.add(h);
      came.push(nodeItem(h, this.t++));
    }
    this.items.push(...came);
    return { gone, came };
  }
}

function clusterNodes(n: number): ClusterNode[] {
  const out: ClusterNode[] = [];
  for (let i = 0; i < n; i++) out.push({ id: `${host(i)}:8041`, host: host(i), rack: `/rack${Math.floor(i / 40)}`, state: 'RUNNING', healthReport: '', numContainers: 5 });
  return out;
}

function appContainers(n: number, nodes: number): AppContainer[] {
  const out: AppContainer[] = [];
  for (let i = 0; i < n; i++) {
    const h = host(i % nodes);
    out.push({ containerId: `container_1652313600000_0001_01_${pad(i + 2)}`, nodeId: `${h}:8041`, host: h, state: 'RUNNING' });
  }
  return out;
}

/** CPU ms per call of fn over `passes` calls after `warmup` calls; `between` runs untimed before each. */
async function cpuPerPass(passes: number, warmup: number, between: () => void, fn: () => Promise<unknown> | unknown): Promise<number> {
  for (let i = 0; i < warmup; i++) {
    between();
    await fn();
  }
  let total = 0;
  for (let i = 0; i < passes; i++) {
    between();
    const c0 = cpuMs();
    await fn();
    total += cpuMs() - c0;
  }
  return total / passes;
}

export async function benchReconcile(s: ReconcileSizes): Promise<SectionResult> {
  const out = emptyResult();
  const nodes = clusterNodes(s.nodes);
  const nodeViews: NodeView[] = nodes.map((n) => ({ host: n.host, state: n.state }));
  const nodeHosts = nodes.map((n) => n.host);
  const containers = appContainers(s.containers, s.nodes);
  const fraction = 0.6;
  const churnItems = Math.max(1, Math.round(s.items * s.churn));

  // ---- the limit: a plain Set difference of the same sizes -------------------------------------
  const basePop = new Population(s);
  let baseActual = new Set(basePop.items.map((i) => i.node));
  const setDiff = (withContainers: boolean) => () => {
    const running = new Set(nodeHosts);
    const desired: string[] = [];
    for (const it of basePop.items) if (running.has(it.node)) desired.push(it.node);
    const want = new Set(desired);
    const additions = desired.filter((h) => !baseActual.has(h));
    const removals: string[] = [];
    for (const h of baseActual) if (!want.has(h)) removals.push(h);
    if (withContainers) new Set(containers.map((c) => c.containerId));
    baseActual = want;
    return additions.length + removals.length;
  };
  const baseline = await cpuPerPass(s.passes, s.warmup, () => basePop.churn(), setDiff(false));
  const baselineWithContainers = await cpuPerPass(s.passes, s.warmup, () => basePop.churn(), setDiff(true));

  // ---- the pure computation --------------------------------------------------------------------
  const pop = new Population(s);
  let actual: readonly string[] = pop.items.map((i) => i.node);
  const pureSizes: number[] = [];
  // What a pass remembers between plans (the last age order), carried as the controller carries it.
  let memo: DecisionMemo = {};
  // Each pass plans a fresh snapshot, as a store's list() hands out (the same item objects until
  // they change): planning the churned array itself would be answered by the memo as unchanged.
  let snapshot: readonly BlockedItem[] = [...pop.items];
  const pure = await cpuPerPass(s.passes, s.warmup, () => {
    pop.churn();
    snapshot = [...pop.items];
  }, () => {
    const planned = planWith({ items: snapshot, applicationId: APP, now: Date.now(), nodes: nodeViews, maxBlockedFraction: fraction }, memo);
    const plan = planned.plan;
    memo = planned.memo;
    const d = diffBlacklist(plan.blacklist, actual);
    actual = plan.blacklist;
    pureSizes.push(d.additions.length + d.removals.length);
  });
  if (mean(pureSizes) === 0) throw new Error('reconcile bench: the pure passes changed nothing (planned a snapshot the memo took as unchanged)');

  // ---- a whole controller pass over in-memory fakes --------------------------------------------
  const store = new MemoryStore();
  const pop2 = new Population(s);
  for (const it of pop2.items) store.items.set(it.id, it);
  const proxy = new FakeProxy(containers);
  const reconciler = new Controller({
    store,
    rm: new FakeRm(nodes),
    proxy,
    clock: systemClock,
    logger: silentLogger,
    metrics: createMetrics(),
    applicationId: APP,
    settings: { maxBlockedFraction: fraction, evacuationTimeoutMs: 0, releaseBatchSize: 500, refreshIntervalMs: 0 },
  });
  const first = await reconciler.pass();
  if (first.result !== 'synced') throw new Error(`reconciler bench: first pass failed: ${JSON.stringify(first)}`);
  proxy.pushes.length = 0;
  const churnStore = () => {
    const { gone, came } = pop2.churn();
    for (const g of gone) void store.remove(g.id);
    for (const c of came) void store.add({ item: c, allowMerge: false });
  };
  const whole = await cpuPerPass(s.passes, s.warmup, churnStore, async () => {
    const r = await reconciler.pass();
    if (r.result !== 'synced') throw new Error(`reconciler bench: pass failed: ${JSON.stringify(r)}`);
  });
  const pushSizes = proxy.pushes.slice(s.warmup).map((p) => p.additions + p.removals);
  if (proxy.blacklistSet.size !== s.items) throw new Error(`reconciler bench: proxy holds ${proxy.blacklistSet.size} hosts, expected ${s.items}`);

  const sizes = `${s.nodes.toLocaleString('en')} nodes, ${s.items.toLocaleString('en')} items, ${s.containers.toLocaleString('en')} containers, ${(s.churn * 100).toFixed(0)} % churn`;
  const rows: Row[] = [
    {
      section: SECTION,
      figure: `pure desired + diff, CPU per pass (${sizes})`,
      value: pure,
      unit: 'ms',
      limit: baseline,
      limitUnit: 'ms',
      limitWhat: 'plain Set difference, same sizes',
      ratio: pure / baseline,
      goal: '≤ 3×',
      met: pure / baseline <= 3,
    },
    {
      section: SECTION,
      figure: 'whole Controller.pass() over in-memory fakes, CPU per pass (re-reads nodes + containers)',
      value: whole,
      unit: 'ms',
      limit: baselineWithContainers,
      limitUnit: 'ms',
      limitWhat: 'Set difference + Set of container ids',
      ratio: whole / baselineWithContainers,
      goal: '≤ 3×',
      met: whole / baselineWithContainers <= 3,
    },
    {
      section: SECTION,
      figure: `push payload per pass, hosts (list ${s.items.toLocaleString('en')})`,
      value: mean(pushSizes),
      unit: 'hosts',
      limit: churnItems,
      limitUnit: 'items churned',
      limitWhat: 'churn per pass',
      ratio: mean(pushSizes) / churnItems,
      goal: '≤ 1× (∝ churn)',
      met: Math.max(...pushSizes, ...pureSizes) <= churnItems,
    },
  ];
  out.rows.push(...rows);
  out.notes.push(`Reconcile: ${s.passes} timed passes after ${s.warmup} warm-up; CPU = process.cpuUsage (user+system); max-blocked-fraction 0.6; payload max ${Math.max(...pushSizes)} hosts per pass.`);
  return out;
}
