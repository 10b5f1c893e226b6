/**
 * The console's figures (console/figures.js, a browser ES module with no DOM), loaded in Node: the
 * summary tiles, an evacuation's progress, the chart's geometry, ISO times typed by hand, folded
 * texts and links.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../support/paths';

interface Evac {
  itemId: string;
  node: string;
  phase: string;
  since: number;
  deadline?: number;
  containers: string[];
  released: string[];
}
interface Figures {
  summaryTiles(status: unknown, items: unknown[], detector?: unknown): Record<string, Record<string, unknown>>;
  evacuationProgress(e: Evac, now: number): { left: number; released: number; moved: number; total: number; deadline?: number; timeFraction?: number; overdue: boolean };
  niceCeiling(v: number): number;
  chartGeometry(points: { t: number; blocked: number; evacuating: number; deferred: number }[], width: number, height: number): { lines: Record<string, string>; yTicks: { v: number }[]; xTicks: { label: string }[]; top: number };
  parseIsoTime(text: string): { ms?: number; error?: string };
  fold(text: string, max?: number): { short: string; folded: boolean };
  nodePageUrl(links: unknown, host: string): string | undefined;
  taskManagerUrl(links: unknown, containerId: string): string | undefined;
  towardBlock(h: unknown): { toward: string; incidents: string };
}

describe('console: figures (pure, as the browser loads them)', () => {
  let f: Figures;
  before(async () => {
    f = (await import(pathToFileURL(path.join(repoRoot, 'console', 'figures.js')).href)) as Figures;
  });

  it('summary tiles count by sync state, source and the engine’s status', () => {
    const item = (id: string, kind: string, state: string, extra: object = {}) => ({ id, kind, sync: { state }, ...extra });
    const items = [
      item('a', 'node', 'applied'),
      item('b', 'node', 'evacuating'),
      item('/rack1', 'rack', 'applied'),
      item('c', 'node', 'pending'),
      item('d', 'node', 'deferred'),
      item('e', 'node', 'unknown-host', { sync: { state: 'unknown-host', nearest: ['f'] } }),
      item('g', 'node', 'applied', { source: 'detector:failures' }),
      item('h/container_1', 'taskmanager', 'not-applicable'),
      item('h/container_2', 'taskmanager', 'evacuating'),
      item('z', 'node', 'not-applicable'),
    ];
    const status = {
      safetyCap: { blockedRunningNodes: 4, limit: 4, runningNodes: 13 },
      evacuations: [
        { phase: 'WAIT_CONTAINER', containers: ['x', 'y'], released: [] },
        { phase: 'TIMEOUT', containers: [], released: ['w'] },
        { phase: 'READY', containers: [], released: ['v'] },
      ],
      lastError: 'push: proxy down',
    };
    const t = f.summaryTiles(status, items, { mode: 'enforce', report: { cap: { inUse: 1, max: 2 } } });
    assert.deepEqual(t.blocked, { nodes: 5, onYarn: 4, taskManagers: 1 });
    assert.deepEqual(t.deferred, { items: 1, cap: { used: 4, limit: 4, running: 13 } });
    assert.deepEqual(t.evacuating, { nodes: 2, left: 2, released: 1 });
    assert.deepEqual(t.automatic, { items: 1, mode: 'enforce', cap: { inUse: 1, max: 2 } });
    assert.deepEqual(t.unknown, { items: 1, first: { id: 'e', nearest: ['f'] } });
    assert.deepEqual(t.pending, { items: 1, lastError: 'push: proxy down' });
  });

  it('an evacuation’s progress: containers moved of those known, the grace period used, overdue past the deadline', () => {
    const e: Evac = { itemId: 'n', node: 'n', phase: 'WAIT_CONTAINER', since: 1000, deadline: 11_000, containers: ['a', 'b', 'c'], released: ['d'] };
    assert.deepEqual(f.evacuationProgress(e, 6000), { left: 3, released: 1, moved: 1, total: 4, deadline: 11_000, timeFraction: 0.5, overdue: false });
    assert.equal(f.evacuationProgress(e, 12_000).overdue, true);
    assert.equal(f.evacuationProgress({ ...e, deadline: undefined }, 6000).timeFraction, undefined, 'waits forever: no time bar');
    const ready = f.evacuationProgress({ ...e, phase: 'READY', containers: [], released: [] }, 6000);
    assert.deepEqual([ready.moved, ready.total, ready.timeFraction, ready.overdue], [1, 1, 1, false]);
  });

  it('the chart: a step line per series, the top rounded up, ticks at whole times', () => {
    assert.deepEqual([0, 1, 3, 7, 10, 11, 230].map(f.niceCeiling), [1, 1, 5, 10, 10, 20, 500]);
    const t0 = Date.UTC(2026, 11, 1, 10, 0);
    const g = f.chartGeometry(
      [
        { t: t0, blocked: 1, evacuating: 0, deferred: 0 },
        { t: t0 + 30 * 60_000, blocked: 3, evacuating: 1, deferred: 0 },
        { t: t0 + 60 * 60_000, blocked: 2, evacuating: 0, deferred: 1 },
      ],
      342,
      130,
    );
    assert.equal(g.top, 5);
    // Two steps: each later point repeats the earlier value at its own time first.
    assert.equal(g.lines.blocked.split(' ').length, 5);
    assert.deepEqual(g.xTicks.map((x) => x.label), ['10:00', '10:15', '10:30', '10:45', '11:00']);
    assert.deepEqual(g.yTicks.map((y) => y.v), [0, 5]);
    assert.deepEqual(f.chartGeometry([], 300, 100).lines, {});
  });

  it('ISO times: UTC unless a zone is given; what is not a time (or no such day) is refused', () => {
    const at = Date.UTC(2026, 11, 1, 18, 0);
    for (const text of ['2026-12-01 18:00', '2026-12-01T18:00Z', '2026-12-01 18:00:00.000 UTC', '2026-12-01T20:00+02:00', '2026-12-01T13:00-0500']) {
      assert.equal(f.parseIsoTime(text).ms, at, text);
    }
    assert.equal(f.parseIsoTime('2026-12-01').ms, Date.UTC(2026, 11, 1));
    for (const bad of ['12/01/2026 6:00 PM', '2026-13-01 10:00', '2026-02-30 10:00', '2026-12-01 24:30', 'tomorrow', '']) {
      assert.match(f.parseIsoTime(bad).error ?? '', /not (an ISO time|a date and time that exists)/, bad);
    }
  });

  it('folds a long or many-line text to its first line, and leaves a short one alone', () => {
    assert.deepEqual(f.fold('disk full'), { short: 'disk full', folded: false });
    const long = f.fold('x'.repeat(200), 72);
    assert.equal(long.folded, true);
    assert.equal(long.short.length, 72);
    assert.deepEqual(f.fold('first line\nsecond'), { short: 'first line…', folded: true });
  });

  it('links: a NodeManager’s page and Flink’s TaskManager page, only when known', () => {
    const links = { nodePage: { scheme: 'http', port: 8042 }, flink: 'http://rm:8088/proxy/application_1_0001/' };
    assert.equal(f.nodePageUrl(links, 'nm1.example'), 'http://nm1.example:8042/node');
    assert.equal(f.taskManagerUrl(links, 'container_e01_1_0001_01_000002'), 'http://rm:8088/proxy/application_1_0001/#/task-manager/container_e01_1_0001_01_000002/metrics');
    assert.equal(f.nodePageUrl({}, 'nm1.example'), undefined);
    assert.equal(f.taskManagerUrl(undefined, 'c'), undefined);
  });

  it('a detector host: how far toward a block, and what its incidents count for (not "0 / 3" beside "blocked")', () => {
    const at = 1;
    const blocked = { score: 0, threshold: 3, incidents: [1, 2, 3].map(() => ({ at, status: 'consumed' })) };
    assert.deepEqual(f.towardBlock(blocked), { toward: '0 of 3', incidents: '3: 3 spent by a block' });
    const mixed = { score: 2, threshold: 3, incidents: [{ at, status: 'counted' }, { at, status: 'job-fault' }, { at, status: 'counted' }, { at, status: 'forgiven' }] };
    assert.deepEqual(f.towardBlock(mixed), { toward: '2 of 3', incidents: "4: 2 counting, 1 forgiven by an unblock, 1 the job's fault" });
    assert.deepEqual(f.towardBlock({ incidents: [{ at, status: 'counted' }] }), { toward: '1', incidents: '1: 1 counting' }, 'an older report without score/threshold');
    assert.deepEqual(f.towardBlock({}), { toward: '0', incidents: '0' });
  });
});
