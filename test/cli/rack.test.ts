/**
 * Rack blocks end to end: `blocklist block-rack /rack01` puts the rack path on YARN's blacklist
 * (the simulator's scheduler, like YARN's SchedulerAppUtils.isPlaceBlacklisted, then places nothing
 * on any node of it), evacuates every node of the rack, and counts against the safety cap by the
 * RUNNING nodes it covers. Child processes against a sidecar wired to the YARN simulator.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { tempDir } from '../support/paths';
import { http } from '../support/sidecar';
import { silentLogger } from '../../src/core/logger';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { sidecarConfigForSimulator } from '../../src/quickstart/local-cluster';
import { expectCode, runCli } from './run';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitFor(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('cli: rack blocks (block-rack) against a sidecar wired to the YARN simulator', function () {
  this.timeout(60_000);
  let sim: RunningSimulator;
  let sidecar: Sidecar;

  before(async () => {
    sim = await startSimulator({ port: 0, nodes: 8, racks: 2, containers: 8, tickMs: 100, seed: 3 });
    const config = sidecarConfigForSimulator(sim.url, path.join(tempDir('blocklist-rack-'), 'b.db'), {
      'rest.port': '0',
      'cluster.resource-blocklist.poll-interval': '200 ms',
      'cluster.resource-blocklist.max-blocked-fraction': '0.5',
    });
    sidecar = await startSidecar({ config, logger: silentLogger, env: {} });
  });
  after(async () => {
    await sidecar?.close();
    await sim?.close();
  });

  const run = (...args: string[]) => runCli([...args, '--server', sidecar.url]);
  const state = async (rack: string) => ((await http(sidecar.url, 'GET', `/blocklist/racks/${encodeURIComponent(rack)}`)).body as { sync?: { state: string; detail?: string } }).sync;

  it('pushes the rack, evacuates every node of it, counts it by its nodes against the cap; refuses a non-path', async () => {
    const racks = [...new Set(sim.cluster.nodes.map((n) => n.rack))].sort();
    assert.equal(racks.length, 2);
    const [r1, r2] = racks;
    const onR1 = () => sim.cluster.nodes.filter((n) => n.rack === r1).reduce((k, n) => k + n.containers.size, 0);
    assert.ok(onR1() > 0, 'the job runs containers on the first rack');

    const dry = JSON.parse(expectCode(await run('block-rack', r1, '--cause', 'top-of-rack switch', '--evacuate', '--dry-run', '-o', 'json'), 0, 'dry run').stdout) as { dryRun: { blacklistAdditions: string[] } };
    assert.deepEqual(dry.dryRun.blacklistAdditions, [r1], 'a dry run: the rack itself goes on the blacklist');

    const blocked = expectCode(await run('block-rack', r1, '--cause', 'top-of-rack switch', '--evacuate', '--evacuation-timeout', '0'), 0, 'block-rack');
    assert.match(blocked.stdout, new RegExp(`^blocked rack ${r1} EVACUATE`));
    await waitFor('the rack on the blacklist', () => sim.cluster.clientBlacklistView().includes(r1));
    await waitFor("the rack's containers released", () => onR1() === 0);
    await waitFor('evacuated', async () => (await state(r1))?.state === 'evacuated');

    // 4 of 8 RUNNING nodes may be blacklisted (0.5): the first rack holds all four slots.
    const second = expectCode(await run('block-rack', r2, '--cause', 'second switch'), 7, 'second rack: stored, deferred');
    assert.match(second.stderr, /deferred: .*4 of at most 4 of 8 RUNNING nodes/);
    await waitFor('the second rack deferred', async () => (await state(r2))?.state === 'deferred');
    assert.ok(!sim.cluster.clientBlacklistView().includes(r2));

    const list = expectCode(await run('list', '-o', 'json'), 0, 'list');
    assert.equal((JSON.parse(list.stdout) as Record<string, { kind: string }>)[r1].kind, 'rack');
    // A YARN exclude file holds hosts only: the racks are left out, and said to be racks.
    const exported = expectCode(await run('export', '--format', 'text'), 0, 'export');
    assert.match(exported.stderr, /^.*2 rack item\(s\) left out/m);
    assert.doesNotMatch(exported.stderr, /task manager/);

    expectCode(await run('unblock', r1), 0, 'unblock the first rack');
    await waitFor('the second rack takes its place', () => sim.cluster.clientBlacklistView().includes(r2) && !sim.cluster.clientBlacklistView().includes(r1));

    const bad = expectCode(await run('block-rack', 'rack01', '--cause', 'x'), 2, 'not a rack path');
    assert.match(bad.stderr, /must be a rack path as YARN names it, starting with '\/'/);
  });
});
