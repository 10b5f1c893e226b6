/**
 * The console's pure helpers (console/format.js, a browser ES module with no DOM), loaded in Node:
 * time and duration text, filter and sort, the node picture's states, desired vs actual.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../support/paths';

interface Item {
  id: string;
  kind: string;
  action: string;
  cause: string;
  scope: string;
  startTimestamp: string;
  endTimestamp: string;
  createdBy: string;
  updatedBy: string;
  sync?: { state: string; detail?: string; evacuation?: unknown };
}
interface Row {
  host: string;
  desired: boolean;
  actual: boolean;
  others: string[];
  diff: string;
}
interface Format {
  PERMANENT: string;
  span(ms: number): string;
  relative(at: number, now: number): string;
  absolute(at: number): string;
  endsText(end: string, now: number): { rel: string; abs: string };
  parseDuration(text: string): { ms?: number; error?: string };
  syncText(sync: unknown, now: number): { state: string; detail: string };
  filterItems(items: Item[], f: { text?: string; kind?: string; state?: string }): Item[];
  sortItems(items: Item[], by: string, dir: string): Item[];
  nodeStates(status: unknown, items: Item[]): Map<string, string>;
  byRack(nodes: { host: string; rack?: string }[]): { rack: string; nodes: { host: string }[] }[];
  blacklistRows(desired: string[], actual: string[], owners?: Record<string, string[]>, ours?: string): Row[];
}

const item = (id: string, over: Partial<Item> = {}): Item => ({
  id,
  kind: id.includes('/') ? 'taskmanager' : 'node',
  action: 'MARK_BLOCKED',
  cause: 'c',
  scope: 'cluster',
  startTimestamp: '1000',
  endTimestamp: '9223372036854775807',
  createdBy: 'alice',
  updatedBy: 'alice',
  ...over,
});

describe('console: format helpers', () => {
  let f: Format;
  before(async () => {
    // A real ES module import (the file the browser loads), not a copy.
    f = (await import(pathToFileURL(path.join(repoRoot, 'console', 'format.js')).href)) as Format;
  });

  it('span, relative and absolute times', () => {
    assert.equal(f.span(0), '0s');
    assert.equal(f.span(59_999), '59s');
    assert.equal(f.span(250_000), '4m 10s');
    assert.equal(f.span(3 * 86_400_000 + 4 * 3_600_000 + 5 * 60_000), '3d 4h');
    assert.equal(f.relative(70_000, 10_000), 'in 1m');
    assert.equal(f.relative(10_000, 70_000), '1m ago');
    assert.equal(f.absolute(Date.UTC(2026, 10, 30, 15, 4, 5, 678)), '2026-11-30 15:04:05Z');
  });

  it('a permanent item ends "never"; others relative and absolute', () => {
    assert.deepEqual(f.endsText(f.PERMANENT, 0), { rel: 'never', abs: '' });
    assert.deepEqual(f.endsText(String(Date.UTC(2026, 0, 1)), Date.UTC(2025, 11, 31, 23)), { rel: 'in 1h', abs: '2026-01-01 00:00:00Z' });
  });

  it('durations as people type them; a bare number is minutes; nonsense is refused', () => {
    assert.deepEqual(f.parseDuration('30 min'), { ms: 1_800_000 });
    assert.deepEqual(f.parseDuration('2h'), { ms: 7_200_000 });
    assert.deepEqual(f.parseDuration(' 90 s '), { ms: 90_000 });
    assert.deepEqual(f.parseDuration('1 d'), { ms: 86_400_000 });
    assert.deepEqual(f.parseDuration('15'), { ms: 900_000 });
    assert.deepEqual(f.parseDuration('1.5 h'), { ms: 5_400_000 });
    for (const bad of ['', 'soon', '-5 min', '0', '5 weeks']) assert.ok(f.parseDuration(bad).error, bad);
  });

  it('sync text: evacuation phase, containers left and the countdown; a deferred item says why', () => {
    const evac = { state: 'evacuating', evacuation: { phase: 'WAIT_CONTAINER', containers: ['a', 'b'], released: [], deadline: 100_000 } };
    assert.deepEqual(f.syncText(evac, 40_000), { state: 'evacuating', detail: 'WAIT_CONTAINER, 2 containers left, deadline in 1m' });
    const forever = { state: 'evacuating', evacuation: { phase: 'WAIT_CONTAINER', containers: ['a'], released: [] } };
    assert.match(f.syncText(forever, 0).detail, /1 container left, no deadline/);
    assert.deepEqual(f.syncText({ state: 'deferred', detail: 'held back by the safety cap' }, 0), { state: 'deferred', detail: 'held back by the safety cap' });
    assert.equal(f.syncText(undefined, 0).state, 'unknown');
  });

  it('filter by text (id, cause, scope, who), kind and state; sort by any column, both ways', () => {
    const items = [
      item('n2', { cause: 'Disk full', startTimestamp: '3000', sync: { state: 'applied' } }),
      item('n1', { cause: 'nic', updatedBy: 'bob', startTimestamp: '2000', sync: { state: 'deferred' } }),
      item('n3/container_e01_1652313600000_0001_01_000002', { endTimestamp: '5000', startTimestamp: '1000', sync: { state: 'evacuating' } }),
    ];
    assert.deepEqual(f.filterItems(items, { text: 'DISK' }).map((i) => i.id), ['n2']);
    assert.deepEqual(f.filterItems(items, { text: 'bob' }).map((i) => i.id), ['n1']);
    assert.deepEqual(f.filterItems(items, { kind: 'taskmanager' }).length, 1);
    assert.deepEqual(f.filterItems(items, { state: 'deferred' }).map((i) => i.id), ['n1']);
    assert.deepEqual(f.sortItems(items, 'id', 'asc').map((i) => i.id[1]), ['1', '2', '3']);
    assert.deepEqual(f.sortItems(items, 'since', 'desc').map((i) => i.id[1]), ['2', '1', '3']);
    // Permanent (Long.MAX) sorts after every finite end.
    assert.deepEqual(f.sortItems(items, 'ends', 'asc')[0].id[1], '3');
  });

  it('node states, most urgent first: evacuating > blocked > pending > deferred > not RUNNING > ok', () => {
    const status = {
      blacklist: { desired: ['b', 'p', 'e'], actual: ['b', 'e'] },
      deferred: ['d'],
      evacuations: [{ node: 'e', phase: 'WAIT_CONTAINER' }, { node: 'r', phase: 'READY' }],
      nodes: { list: ['b', 'p', 'q', 'd', 'e', 'u', 'o', 'r'].map((host) => ({ host, state: host === 'u' ? 'UNHEALTHY' : 'RUNNING' })) },
    };
    // q: stored, not yet through a pass (the engine says pending).
    const items = [item('d'), item('q', { sync: { state: 'pending' } })];
    assert.deepEqual(Object.fromEntries(f.nodeStates(status, items)), { b: 'blocked', p: 'pending', q: 'pending', d: 'deferred', e: 'evacuating', u: 'unhealthy', o: 'ok', r: 'ok' });
  });

  it('a rack block (on the blacklist as the rack path) blocks its nodes, or leaves them pending until applied', () => {
    const nodes = [
      { host: 'a1', rack: '/ra', state: 'RUNNING' },
      { host: 'a2', rack: '/ra', state: 'UNHEALTHY' },
      { host: 'b1', rack: '/rb', state: 'RUNNING' },
      { host: 'c1', rack: '/rc', state: 'RUNNING' },
      { host: 'd1', rack: '/rd', state: 'RUNNING' },
      { host: 'x1', state: 'RUNNING' },
    ];
    const status = { blacklist: { desired: ['/ra', '/rb'], actual: ['/ra'] }, deferred: [], evacuations: [], nodes: { list: nodes } };
    // /rc: stored, not yet through a pass (the engine says pending); /rd holds no block.
    const items = [item('/ra', { kind: 'rack' }), item('/rb', { kind: 'rack' }), item('/rc', { kind: 'rack', sync: { state: 'pending' } })];
    assert.deepEqual(Object.fromEntries(f.nodeStates(status, items)), { a1: 'blocked', a2: 'blocked', b1: 'pending', c1: 'pending', d1: 'ok', x1: 'ok' });
    assert.deepEqual(f.filterItems(items, { kind: 'rack' }).length, 3);
  });

  it('nodes grouped by rack, sorted', () => {
    const g = f.byRack([{ host: 'b', rack: '/r2' }, { host: 'a', rack: '/r1' }, { host: 'c' }, { host: 'a2', rack: '/r1' }]);
    assert.deepEqual(g.map((r) => [r.rack, r.nodes.map((n) => n.host)]), [['(no rack)', ['c']], ['/r1', ['a', 'a2']], ['/r2', ['b']]]);
  });

  it("desired vs actual: what is left to add or remove; another owner's host is not ours to remove", () => {
    const rows = f.blacklistRows(['a', 'b'], ['b', 'c', 'f'], { blocklist: ['b', 'c'], flink: ['f'] });
    assert.deepEqual(rows, [
      { host: 'a', desired: true, actual: false, others: [], diff: 'add' },
      { host: 'b', desired: true, actual: true, others: [], diff: '' },
      { host: 'c', desired: false, actual: true, others: [], diff: 'remove' },
      { host: 'f', desired: false, actual: true, others: ['flink'], diff: '' },
    ]);
    // Without owners (an older proxy) every extra host is a difference.
    assert.equal(f.blacklistRows([], ['f'])[0].diff, 'remove');
  });
});
