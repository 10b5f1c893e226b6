/**
 * GET /metrics follows Prometheus' own conventions, checked by Prometheus' own linter (promtool,
 * Debian's `prometheus` package; scripts/ensure-promtool.sh installs it in CI). The one exception
 * is FLIP-224's gauge name numBlockedNodes, kept for the FLIP's dashboards and also offered as
 * blocklist_blocked_nodes.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { LocalCluster, startLocalCluster } from '../../src/quickstart/local-cluster';
import { http, tempDir } from '../support/sidecar';
import { waitFor } from '../faults/support';

const promtool = (): string | undefined => {
  const r = spawnSync('promtool', ['--version'], { stdio: 'ignore' });
  return r.error || r.status !== 0 ? undefined : 'promtool';
};

describe('metrics: promtool check metrics passes on a live /metrics', function () {
  this.timeout(30_000);
  let local: LocalCluster;

  before(async function () {
    if (!promtool()) {
      if (process.env.CI === 'true') throw new Error('promtool is missing in CI (scripts/ensure-promtool.sh installs Debian prometheus)');
      console.log('      (skipped: promtool not installed; apt-get install prometheus)');
      this.skip();
    }
    local = await startLocalCluster({ restPort: 0, simPort: 0, sqlitePath: path.join(tempDir(), 'm.db'), nodes: 6, containers: 6, tickMs: 200 });
  });
  after(async () => {
    await local?.close();
  });

  it('after a block and an evacuation every series but the FLIP-224 gauge is conventional', async () => {
    const api = local.sidecar.url;
    const host = local.sim.cluster.nodes[1].host;
    assert.equal((await http(api, 'PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'disk', evacuationTimeout: 0 })).status, 201);
    // Wait until the push and the release happened, so the histogram and counters have samples.
    await waitFor('the release', async () => /^blocklist_containers_released_total [1-9]/m.test((await http(api, 'GET', '/metrics')).text), 10_000);
    const text = (await http(api, 'GET', '/metrics')).text;
    assert.match(text, /^numBlockedNodes 1$/m);
    assert.match(text, /^blocklist_blocked_nodes 1$/m);
    // The series dashboards and alerts read (test/metrics/series.unit.test.ts has their rules).
    const app = local.sim.cluster.applicationId;
    assert.match(text, new RegExp(`^blocklist_sidecar_info\\{application_id="${app}",app_attempt_id="appattempt_[0-9_]+"\\} 1$`, 'm'));
    assert.match(text, new RegExp(`^blocklist_item_info\\{id="${host}",kind="node",action="MARK_BLOCKED_AND_EVACUATE_TASKS",scope="cluster",source=""\\} 1$`, 'm'));
    assert.match(text, new RegExp(`^blocklist_evacuation_phase\\{item="${host}",node="${host}",phase="(TIMEOUT|READY)"\\} 1$`, 'm'));
    assert.match(text, /^blocklist_build_info\{version="[^"]+",nodejs="[^"]+"\} 1$/m);
    assert.match(text, /^process_resident_memory_bytes \d+$/m);
    assert.match(text, /^nodejs_eventloop_lag_p99_seconds /m);
    const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    const problems = `${r.stdout}${r.stderr}`
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('numBlockedNodes '));
    assert.deepEqual(problems, [], `promtool found:\n${problems.join('\n')}`);
  });
});
