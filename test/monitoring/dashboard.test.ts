/**
 * deploy/grafana/flink-yarn-blocklist.json reads only series a real sidecar exports: every metric
 * name in its expressions (and in the alert rules') is on the /metrics of a sidecar wired to the
 * YARN simulator with a block, an evacuation and the detector in shadow mode. Its expressions parse
 * (promtool, as recording rules), and it has the views an on-call engineer needs.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { LocalCluster, startLocalCluster } from '../../src/quickstart/local-cluster';
import { http, tempDir } from '../support/sidecar';
import { waitFor } from '../faults/support';
import { exposedNames, interpolate, metricNames } from './promql';
import { alertRules, dashboard, promtool, requirePromtool } from './support';

/** Series of Prometheus itself that rules may read. */
const PROMETHEUS_OWN = new Set(['up']);

describe('monitoring: the Grafana dashboard and the alert rules read what a sidecar exports', function () {
  this.timeout(60_000);
  let local: LocalCluster;
  let exposed: Set<string>;
  const exprs = () => dashboard().panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

  before(async function () {
    requirePromtool(this);
    local = await startLocalCluster({ restPort: 0, simPort: 0, sqlitePath: path.join(tempDir(), 'd.db'), nodes: 6, containers: 6, tickMs: 200, detector: 'shadow' });
    const api = local.sidecar.url;
    const host = local.sim.cluster.nodes[1].host;
    assert.equal((await http(api, 'PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'disk', evacuationTimeout: 600 })).status, 201);
    // The evacuation and the detector's first pass are what make their series appear.
    await waitFor('an evacuation and a detector pass', async () => {
      const t = (await http(api, 'GET', '/metrics')).text;
      return /^blocklist_evacuation_deadline_timestamp_seconds\{/m.test(t) && /^blocklist_detector_automatic_blocks_limit /m.test(t);
    }, 10_000);
    exposed = exposedNames((await http(api, 'GET', '/metrics')).text);
  });
  after(async () => {
    await local?.close();
  });

  it('every metric in the dashboard is one the sidecar (or Prometheus) exports', () => {
    const missing = exprs().flatMap(({ panel, expr }) => metricNames(expr).filter((n) => !exposed.has(n) && !PROMETHEUS_OWN.has(n)).map((n) => `${panel}: ${n}`));
    assert.deepEqual(missing, []);
    assert.ok(exprs().length >= 30, `${exprs().length} expressions`);
  });

  it('every metric in the alert rules is one the sidecar (or Prometheus) exports', () => {
    const missing = alertRules().flatMap((r) => metricNames(r.expr).filter((n) => !exposed.has(n) && !PROMETHEUS_OWN.has(n)).map((n) => `${r.alert}: ${n}`));
    assert.deepEqual(missing, []);
  });

  it('every dashboard expression parses (promtool, as recording rules)', () => {
    const file = path.join(tempDir('blocklist-dashboard-'), 'dashboard-rules.yml');
    const rules = exprs().map((e, i) => ({ record: `dashboard:expr_${i}`, expr: interpolate(e.expr) }));
    fs.writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules }] }));
    const r = promtool(['check', 'rules', file]);
    assert.ok(r.ok, r.output);
  });

  it('has the views of the issue: blocked over time, per job, evacuations, deferred, pushes and failures, RM footprint, detector decisions', () => {
    const d = dashboard();
    const titles = d.panels.filter((p) => p.type === 'row').map((p) => p.title);
    for (const t of ['Blocked over time', 'Per job', 'Evacuations', 'Deferred and the safety cap', 'Pushes and failures', 'Peers: wedges and failing passes', 'RM footprint', 'Detector decisions']) assert.ok(titles.includes(t), `row '${t}'`);
    assert.equal(d.uid, 'flink-yarn-blocklist');
    assert.deepEqual(d.templating.list.map((v) => v.name), ['datasource', 'application']);
    // Panels side by side never overlap and stay within Grafana's 24 columns.
    for (const p of d.panels) assert.ok(p.gridPos.x + p.gridPos.w <= 24, `${p.title} fits 24 columns`);
    const ids = d.panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
  });
});
