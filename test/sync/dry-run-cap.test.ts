/**
 * Dry runs report what would really happen, deferrals included: a sidecar wired to the simulator
 * with a tight safety cap, asked through the CLI (block and import with --dry-run), then the real
 * import, whose deferrals must be the ones the dry run named.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LocalCluster, startLocalCluster } from '../../src/quickstart/local-cluster';
import { expectCode, runCli } from '../cli/run';
import { tempDir } from '../support/sidecar';

describe('dry runs and the safety cap (CLI against a sidecar wired to the simulator)', function () {
  this.timeout(60_000);
  let local: LocalCluster;
  let dir: string;
  before(async () => {
    dir = tempDir('blocklist-dry-cap-');
    local = await startLocalCluster({ restPort: 0, simPort: 0, sqlitePath: path.join(dir, 'b.db'), nodes: 10, containers: 0, tickMs: 0, define: { 'cluster.resource-blocklist.max-blocked-fraction': '0.2' } });
  });
  after(async () => {
    await local?.close();
  });
  const cli = (...args: string[]) => runCli([...args, '--server', local.sidecar.url]);

  it('block and import --dry-run name the blocks the cap would hold back, and the real import holds back exactly those', async () => {
    const host = (i: number) => local.sim.cluster.nodes[i - 1].host;
    expectCode(await cli('block', host(1), '--cause', 'disk'), 0, 'block 1');
    expectCode(await cli('block', host(2), '--cause', 'disk'), 0, 'block 2');
    for (let i = 0; i < 100 && local.sim.cluster.clientBlacklistView().length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(local.sim.cluster.clientBlacklistView(), [host(1), host(2)]);

    const one = JSON.parse(expectCode(await cli('block', host(3), '--cause', 'nic', '--evacuate', '--dry-run', '-o', 'json'), 0, 'block dry').stdout) as { dryRun: Record<string, string[]> };
    assert.deepEqual(one.dryRun, { blacklistAdditions: [], blacklistRemovals: [], containersToRelease: [], deferred: [host(3)] });
    const human = expectCode(await cli('block', host(3), '--cause', 'nic', '--dry-run'), 0, 'human dry run');
    assert.match(human.stdout, /deferred by the safety cap \(stored, not blacklisted\): node0003\.sim\.local/);

    const file = path.join(dir, 'excludes');
    fs.writeFileSync(file, `${host(4)}\n${host(5)}\n`);
    const dry = JSON.parse(expectCode(await cli('import', file, '--action', 'block', '--cause', 'rack', '--dry-run', '-o', 'json'), 0, 'import dry').stdout) as { effect: Record<string, string[]> };
    assert.deepEqual(dry.effect.blacklistAdditions, []);
    assert.deepEqual(dry.effect.deferred, [host(4), host(5)]);

    expectCode(await cli('import', file, '--action', 'block', '--cause', 'rack'), 0, 'import');
    let deferred: string[] = [];
    for (let i = 0; i < 100 && deferred.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 50));
      deferred = (JSON.parse(expectCode(await cli('status', '-o', 'json'), 0, 'status').stdout) as { deferred: string[] }).deferred;
    }
    assert.deepEqual(deferred, [host(4), host(5)]);
    assert.deepEqual(local.sim.cluster.clientBlacklistView(), [host(1), host(2)]);
  });
});
