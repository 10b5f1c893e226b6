/**
 * A host the RM does not know (wrong case, typo), end to end: the CLI warns at block time with the
 * nearest names, the block is kept and pushed, its sync state is unknown-host, and it does not
 * count in numBlockedNodes. Child processes against a sidecar wired to the YARN simulator.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { tempDir } from '../support/paths';
import { http } from '../support/sidecar';
import { LocalCluster, startLocalCluster } from '../../src/quickstart/local-cluster';
import { expectCode, runCli } from './run';

describe('cli: blocking a host the ResourceManager does not know (unknown-host)', function () {
  this.timeout(60_000);
  let local: LocalCluster;

  before(async () => {
    const dir = tempDir('blocklist-unknown-');
    local = await startLocalCluster({ restPort: 0, simPort: 0, sqlitePath: path.join(dir, 'b.db'), nodes: 6, containers: 4, tickMs: 200, define: { 'cluster.resource-blocklist.max-blocked-fraction': '1' } });
  });
  after(async () => {
    await local?.close();
  });

  const metric = async (name: string): Promise<number> => {
    const text = (await http(local.sidecar.url, 'GET', '/metrics')).text;
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    assert.ok(m, `${name} in /metrics`);
    return Number(m[1]);
  };

  it('warns with the nearest names, keeps the block (state unknown-host), counts only known hosts', async () => {
    const real = local.sim.cluster.nodes[0].host;
    const typo = real.toUpperCase();
    const [bad, good] = await Promise.all([
      runCli(['block', typo, '--cause', 'typo', '--server', local.sidecar.url]),
      runCli(['block', local.sim.cluster.nodes[1].host, '--cause', 'disk', '--server', local.sidecar.url]),
    ]);
    expectCode(bad, 0, 'an unknown host is still blocked');
    assert.match(bad.stderr, new RegExp(`knows no node '${typo.replace(/\./g, '\\.')}'.*did you mean '${real.replace(/\./g, '\\.')}'`));
    expectCode(good, 0, 'a known host');
    assert.equal(good.stderr, '', 'no warning for a host the RM knows');

    const item = (await http(local.sidecar.url, 'GET', `/blocklist/nodes/${typo}`)).body as { sync?: { state: string; nearest?: string[] } };
    assert.equal(item.sync?.state, 'unknown-host');
    assert.equal(item.sync?.nearest?.[0], real);
    assert.ok(local.sim.cluster.clientBlacklistView().includes(typo), 'pushed all the same: YARN blocks it once a node of that name joins');
    assert.equal(await metric('numBlockedNodes'), 1);
    assert.equal(await metric('blocklist_blocked_nodes'), 1);

    const list = expectCode(await runCli(['list', '--server', local.sidecar.url]), 0, 'list');
    assert.match(list.stdout, /unknown-host/);
  });
});
