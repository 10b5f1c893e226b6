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

    // A real block over the cap: stored, printed, and exit 7 with the cap's reason; --wait does not follow what never starts.
    const over = expectCode(await cli('block', host(6), '--cause', 'psu'), 7, 'block over the cap');
    assert.match(over.stdout, /blocked node node0006\.sim\.local/);
    assert.match(over.stderr, /deferred: stored, but not on YARN's blacklist: held back by the safety cap: 2 of at most 2 of 10 RUNNING nodes/);
    const waited = expectCode(await cli('block', host(7), '--cause', 'psu', '--evacuate', '--wait'), 7, 'block --wait over the cap');
    assert.match(waited.stderr, /deferred: .*nothing to wait for/);
  });
});

describe('the safety cap of a 3-node cluster at the default max-blocked-fraction (0.33 × 3 rounds to 0)', function () {
  this.timeout(60_000);
  let local: LocalCluster;
  before(async () => {
    local = await startLocalCluster({ restPort: 0, simPort: 0, sqlitePath: path.join(tempDir('blocklist-cap3-'), 'b.db'), nodes: 3, containers: 0, tickMs: 0 });
  });
  after(async () => {
    await local?.close();
  });
  const put = async (host: string) => {
    const res = await fetch(`${local.sidecar.url}/blocklist/nodes/${host}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'MARK_BLOCKED', cause: 'trial' }) });
    return { status: res.status, body: (await res.json()) as { sync?: { state: string; detail?: string } } };
  };

  it("an operator's first block reaches YARN; the second is answered deferred, with why, in the PUT's own answer", async () => {
    const host = (i: number) => local.sim.cluster.nodes[i - 1].host;
    // Wait for the engine's first pass to have read the nodes (the answer's cap comes from it).
    for (let i = 0; i < 100; i++) {
      const s = (await (await fetch(`${local.sidecar.url}/status`)).json()) as { safetyCap?: unknown };
      if (s.safetyCap) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const first = await put(host(1));
    assert.equal(first.status, 201);
    assert.notEqual(first.body.sync?.state, 'deferred');
    for (let i = 0; i < 100 && local.sim.cluster.clientBlacklistView().length < 1; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(local.sim.cluster.clientBlacklistView(), [host(1)]);
    const second = await put(host(2));
    assert.equal(second.status, 201);
    assert.equal(second.body.sync?.state, 'deferred');
    assert.match(second.body.sync?.detail ?? '', /1 of at most 1 of 3 RUNNING nodes.*0\.33 × 3 rounds to 0/);
  });
});
