/**
 * The series /metrics gained for dashboards and alerts: one info series per item in force
 * (bounded), the job this sidecar serves, the safety cap, blocks not yet on YARN, each evacuation
 * by node (bounded), the process's own series. Read from a fake store and a fake engine reading.
 */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { BlockedItem, EVACUATE } from '../../src/model/item';
import { BlocklistSource, EngineReading, EvacuationReading, createMetrics } from '../../src/metrics/metrics';
import { newestItems } from '../../src/metrics/item-series';
import { packageVersion } from '../../src/core/package-info';
import { APP, nodeItem, tmItem } from '../sync/items';

const T0 = 1_800_000_000_000;

/** The sample lines of one metric name: labels text → value. */
function samples(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
    if (m && m[1] === name) out.set(m[2] ?? '', Number(m[3]));
  }
  return out;
}

function rackItem(rack: string, start: number): BlockedItem {
  return { ...nodeItem('x', { start }), id: rack, kind: 'rack', node: rack };
}

function setup(items: BlockedItem[], engine?: () => EngineReading, opts: Parameters<typeof createMetrics>[0] = {}) {
  const clock = new FakeClock(T0);
  const metrics = createMetrics(opts);
  let version = 1;
  const store = { version: async () => String(version), list: async () => items };
  const source: BlocklistSource = { store, clock, applicationId: () => APP, enabled: true, ...(engine ? { engine } : {}) };
  metrics.countFromStore(source);
  return { metrics, clock, change: (next: BlockedItem[]) => ((items = next), version++) };
}

const evacuation = (itemId: string, phase: string, left: number, released: number, deadline?: number): EvacuationReading => ({
  itemId,
  node: itemId.split('/')[0],
  phase,
  containers: Array.from({ length: left }, (_, i) => `c${i}`),
  released: Array.from({ length: released }, (_, i) => `r${i}`),
  ...(deadline !== undefined ? { deadline } : {}),
});

describe('metrics: series per item, per evacuation, of the job and of the process', () => {
  it('one blocklist_item_info series per item in force, labelled with id, kind, action, scope and source', async () => {
    const items = [
      nodeItem('n1.example', { start: T0 - 3000 }),
      { ...nodeItem('n2.example', { start: T0 - 2000, action: EVACUATE }), source: 'detector:failures' },
      tmItem('n3.example', 'container_e01_1652313600000_0001_01_000002', { start: T0 - 1000 }),
      nodeItem('other.example', { scope: 'application_1652313600000_0099' }),
      nodeItem('gone.example', { end: T0 - 1 }),
    ];
    const { metrics } = setup(items);
    const info = samples(await metrics.text(), 'blocklist_item_info');
    assert.deepEqual([...info.keys()].sort(), [
      '{id="n1.example",kind="node",action="MARK_BLOCKED",scope="cluster",source=""}',
      '{id="n2.example",kind="node",action="MARK_BLOCKED_AND_EVACUATE_TASKS",scope="cluster",source="detector:failures"}',
      '{id="n3.example/container_e01_1652313600000_0001_01_000002",kind="taskmanager",action="MARK_BLOCKED",scope="cluster",source=""}',
    ]);
    assert.ok([...info.values()].every((v) => v === 1));
    assert.equal(samples(await metrics.text(), 'blocklist_item_series_omitted').get(''), 0);
  });

  it('is bounded: at 100,000 items the newest max-series get a series and the rest are counted as omitted', async () => {
    const many = Array.from({ length: 100_000 }, (_, i) => nodeItem(`h${String(i).padStart(6, '0')}.example`, { start: T0 - 100_000 + i }));
    const { metrics } = setup(many, undefined, { maxItemSeries: 1000 });
    const t0 = process.hrtime.bigint();
    const text = await metrics.text();
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const info = samples(text, 'blocklist_item_info');
    assert.equal(info.size, 1000);
    assert.ok(info.has('{id="h099999.example",kind="node",action="MARK_BLOCKED",scope="cluster",source=""}'), 'the newest is kept');
    assert.ok(!info.has('{id="h098999.example",kind="node",action="MARK_BLOCKED",scope="cluster",source=""}'), 'the 1001st newest is not');
    assert.equal(samples(text, 'blocklist_item_series_omitted').get(''), 99_000);
    assert.equal(samples(text, 'blocklist_blocked_nodes').get(''), 100_000, 'the count stays exact');
    const total = text.split('\n').filter((l) => l && !l.startsWith('#')).length;
    console.log(`      (100,000 items: ${total} samples on /metrics without the process's, ${info.size} of them item series; first scrape ${ms.toFixed(0)} ms)`);
    assert.ok(total < 1100, `${total} samples`);
  });

  it('newestItems picks the newest by start, then by id, whatever the order given', () => {
    const items = [5, 1, 9, 3, 9, 7].map((s, i) => nodeItem(`h${i}`, { start: s }));
    assert.deepEqual(newestItems(items, 3).map((i) => i.id), ['h2', 'h4', 'h5']);
    assert.deepEqual(newestItems(items, 10).map((i) => i.id), ['h2', 'h4', 'h5', 'h0', 'h3', 'h1']);
    assert.deepEqual(newestItems(items, 0), []);
  });

  it('the series follow the store: an unblocked item loses its series at the next scrape', async () => {
    const a = nodeItem('a.example');
    const b = nodeItem('b.example');
    const { metrics, change } = setup([a, b]);
    assert.equal(samples(await metrics.text(), 'blocklist_item_info').size, 2);
    change([a]);
    assert.deepEqual([...samples(await metrics.text(), 'blocklist_item_info').keys()], ['{id="a.example",kind="node",action="MARK_BLOCKED",scope="cluster",source=""}']);
  });

  it('blocklist_sidecar_info names the application and attempt; the cap gauges read the last pass', async () => {
    const engine = (): EngineReading => ({ appAttemptId: 'appattempt_1652313600000_0001_000002', cap: { used: 3, limit: 4, runningNodes: 13 }, evacuations: [] });
    const { metrics } = setup([], engine);
    const text = await metrics.text();
    assert.deepEqual([...samples(text, 'blocklist_sidecar_info')], [[`{application_id="${APP}",app_attempt_id="appattempt_1652313600000_0001_000002"}`, 1]]);
    assert.equal(samples(text, 'blocklist_safety_cap_used_nodes').get(''), 3);
    assert.equal(samples(text, 'blocklist_safety_cap_limit_nodes').get(''), 4);
    assert.equal(samples(text, 'blocklist_cluster_running_nodes').get(''), 13);
  });

  it('blocklist_unapplied_blocks: node and rack blocks in force, not deferred, not on YARN as last known', async () => {
    const items = [nodeItem('on.example'), nodeItem('new.example'), nodeItem('held.example'), rackItem('/rack9', T0 - 10), tmItem('on.example', 'container_e01_1652313600000_0001_01_000002')];
    let reading: EngineReading = { actual: new Set(['on.example']), deferred: [{ id: 'held.example' }], evacuations: [] };
    const { metrics } = setup(items, () => reading);
    assert.equal(samples(await metrics.text(), 'blocklist_unapplied_blocks').get(''), 2, 'new.example and /rack9');
    reading = { actual: new Set(['on.example', 'new.example', '/rack9']), deferred: [{ id: 'held.example' }], evacuations: [] };
    assert.equal(samples(await metrics.text(), 'blocklist_unapplied_blocks').get(''), 0);
    // YARN's blacklist being read again (unknown) is not "nothing applied": the last known one counts.
    reading = { deferred: [{ id: 'held.example' }], evacuations: [] };
    assert.equal(samples(await metrics.text(), 'blocklist_unapplied_blocks').get(''), 0);
  });

  it('each evacuation by item and node: phase, containers left and released, deadline; bounded, moving ones first', async () => {
    const evacs = new Map([
      ['a.example', evacuation('a.example', 'READY', 0, 2, T0 - 1000)],
      ['b.example', evacuation('b.example', 'WAIT_CONTAINER', 3, 0, T0 + 600_000)],
      ['c.example/container_e01_1652313600000_0001_01_000005', evacuation('c.example/container_e01_1652313600000_0001_01_000005', 'TIMEOUT', 1, 1, T0 - 5000)],
      ['d.example', evacuation('d.example', 'WAIT_CONTAINER', 2, 0)],
    ]);
    const { metrics } = setup([], () => ({ evacuations: evacs }), { maxEvacuationSeries: 3 });
    const text = await metrics.text();
    assert.deepEqual([...samples(text, 'blocklist_evacuation_phase').keys()].sort(), [
      '{item="b.example",node="b.example",phase="WAIT_CONTAINER"}',
      '{item="c.example/container_e01_1652313600000_0001_01_000005",node="c.example",phase="TIMEOUT"}',
      '{item="d.example",node="d.example",phase="WAIT_CONTAINER"}',
    ]);
    assert.equal(samples(text, 'blocklist_evacuation_series_omitted').get(''), 1, 'the finished one is left out first');
    assert.equal(samples(text, 'blocklist_evacuation_containers_remaining').get('{item="b.example",node="b.example"}'), 3);
    assert.equal(samples(text, 'blocklist_evacuation_containers_released').get('{item="c.example/container_e01_1652313600000_0001_01_000005",node="c.example"}'), 1);
    assert.equal(samples(text, 'blocklist_evacuation_deadline_timestamp_seconds').get('{item="b.example",node="b.example"}'), (T0 + 600_000) / 1000);
    assert.equal(samples(text, 'blocklist_evacuation_deadline_timestamp_seconds').has('{item="d.example",node="d.example"}'), false, 'no deadline: waits forever');
    // A phase the engine names later (CHECKPOINTING, RELEASING, …) is a label value like any other.
    evacs.set('b.example', evacuation('b.example', 'CHECKPOINTING', 3, 0, T0 + 600_000));
    const again = new Map(evacs);
    const m2 = setup([], () => ({ evacuations: again })).metrics;
    assert.ok(samples(await m2.text(), 'blocklist_evacuation_phase').has('{item="b.example",node="b.example",phase="CHECKPOINTING"}'));
  });

  it('the process series (defaults, build info) come with process: true, once per process however many sidecars', async () => {
    const plain = await setup([]).metrics.text();
    assert.equal(samples(plain, 'blocklist_build_info').size, 0, 'not on a test engine’s metrics');
    const a = await setup([], undefined, { process: true }).metrics.text();
    const b = await setup([], undefined, { process: true }).metrics.text();
    for (const text of [a, b]) {
      assert.deepEqual([...samples(text, 'blocklist_build_info').keys()], [`{version="${packageVersion()}",nodejs="${process.versions.node}"}`]);
      assert.ok(samples(text, 'process_resident_memory_bytes').get('')! > 0);
      assert.ok(samples(text, 'nodejs_heap_size_used_bytes').get('')! > 0);
      assert.equal(samples(text, 'nodejs_active_handles_total').size, 0, 'the gauges named like counters are left out');
      assert.equal(text.split('\n').filter((l) => l.startsWith('# TYPE process_resident_memory_bytes ')).length, 1);
    }
  });
});
