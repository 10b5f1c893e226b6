/**
 * `blocklist detector` against a real sidecar (quickstart settings: shadow mode) and the simulator:
 * the table names the failing host, what the detector would do and why; JSON is the view as served.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LocalCluster, startLocalCluster } from '../../src/quickstart/local-cluster';
import { tempDir } from '../support/sidecar';
import { cliEnv, expectCode, runCli } from '../cli/run';

describe('cli: blocklist detector', function () {
  this.timeout(30_000);
  let local: LocalCluster;
  let dir: string;
  before(async () => {
    dir = tempDir();
    local = await startLocalCluster({ restPort: 0, simPort: 0, sqlitePath: path.join(dir, 'q.db'), nodes: 6, containers: 12, tickMs: 0, seed: 2, detector: 'shadow', define: { 'cluster.resource-blocklist.detector.poll-interval': '1 h', 'cluster.resource-blocklist.detector.max-blocked-fraction': '0.5' } });
  });
  after(async () => {
    await local.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prints each failing host with its score, decision and why; nothing is blocked in shadow mode', async () => {
    const { sim, sidecar } = local;
    const host = sim.flink.hostsWithTaskManagers()[0];
    for (let i = 0; i < 3; i++) sim.flink.failHost({ host, exception: 'java.io.IOException: No space left on device' });
    await sidecar.detector!.pass();
    await sidecar.detector!.pass();
    const env = cliEnv({ BLOCKLIST_SERVER: sidecar.url });
    const r = expectCode(await runCli(['detector'], { env, cwd: dir }), 0, 'detector');
    assert.match(r.stdout, /mode shadow/);
    assert.match(r.stdout, /HOST\s+TOWARD A BLOCK\s+INCIDENTS\s+DECISION/);
    const row = r.stdout.split('\n').find((l) => l.startsWith(host));
    assert.ok(row, r.stdout);
    // A (shadow) block spends the incidents that made it: 0 toward the next one, the 3 said as spent, not a bare "0/3" beside "3".
    assert.match(row, /0 of 3\s+3: 3 spent by a block\s+shadow-blocked\s+shadow until/);
    assert.match(r.stdout, /source flink: read/);
    const j = JSON.parse(expectCode(await runCli(['detector', '-o', 'json'], { env, cwd: dir }), 0, 'json').stdout);
    assert.equal(j.mode, 'shadow');
    assert.equal(j.report.hosts.find((h: { host: string }) => h.host === host).decision, 'shadow-blocked');
    assert.equal(await sidecar.store.get(host), undefined, 'shadow mode blocks nothing');
    assert.deepEqual(sim.cluster.clientBlacklistView(), []);
  });
});
