/**
 * Answers that depend on the application's containers read them when no pass keeps them: with
 * nothing blocked the engine reads no containers (an idle sidecar costs nothing), so a dry run's
 * releases and a new block's `taskManagers` read them once, on demand. A sidecar wired to the
 * simulator over HTTP; the answers are checked against the simulator's own containers.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { LocalCluster, startLocalCluster } from '../../src/quickstart/local-cluster';
import { tempDir } from '../support/sidecar';

describe('api: containers read on demand for the answers that need them (sidecar + simulator)', function () {
  this.timeout(60_000);
  let local: LocalCluster;
  before(async () => {
    local = await startLocalCluster({ restPort: 0, simPort: 0, sqlitePath: path.join(tempDir('blocklist-tms-'), 'b.db'), nodes: 6, containers: 12, tickMs: 0, define: { 'cluster.resource-blocklist.max-blocked-fraction': '1' } });
  });
  after(async () => {
    await local?.close();
  });
  const put = async (host: string, body: Record<string, unknown>, query = '') => {
    const res = await fetch(`${local.sidecar.url}/blocklist/nodes/${host}${query}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return (await res.json()) as { taskManagers: string[]; dryRun?: { containersToRelease: string[]; containersUnknown?: string } };
  };
  /** A node running task managers, and their ids as the simulator knows them. */
  const busy = (skip: string[] = []) => {
    const tms = local.sim.cluster.taskManagers().filter((c) => !skip.includes(c.host));
    const host = tms[0].host;
    return { host, ids: tms.filter((c) => c.host === host).map((c) => c.id).sort() };
  };

  it('with nothing blocked, a dry run of an evacuation lists the containers it would release', async () => {
    const { host, ids } = busy();
    assert.ok(ids.length > 0);
    const dry = await put(host, { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'disk' }, '?dryRun=true');
    assert.deepEqual(dry.dryRun?.containersToRelease, ids);
    assert.equal(dry.dryRun?.containersUnknown, undefined);
  });

  it("the first block's answer lists the task managers on its node", async () => {
    const { host, ids } = busy();
    const created = await put(host, { action: 'MARK_BLOCKED', cause: 'hot' });
    assert.deepEqual(created.taskManagers, ids);
  });

  it("a task manager block naming a container that runs on another node is accepted with a warning that names where it runs", async () => {
    const tms = local.sim.cluster.taskManagers();
    const c = tms[0];
    const other = local.sim.cluster.nodes.find((n) => n.host !== c.host)?.host as string;
    const res = await fetch(`${local.sidecar.url}/blocklist`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ id: `${other}/${c.id}`, action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'slow TM' }, { id: `${c.host}/${c.id}`, action: 'MARK_BLOCKED', cause: 'slow TM' }]) });
    const body = (await res.json()) as { results: { id: string; status: number; warnings?: string[] }[] };
    assert.deepEqual(body.results.map((r) => r.status), [201, 201]);
    assert.match(body.results[0].warnings?.[0] ?? '', new RegExp(`container ${c.id} runs on ${c.host.replace(/\./g, '\\.')}, not on ${other.replace(/\./g, '\\.')}: .*block ${c.host.replace(/\./g, '\\.')}/${c.id} instead`));
    assert.equal(body.results[1].warnings, undefined, 'the right node: no warning');
    const put = await fetch(`${local.sidecar.url}/blocklist/taskmanagers/${other}%2F${c.id}?dryRun=true`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'MARK_BLOCKED', cause: 'x', allowMerge: true }) });
    assert.match(((await put.json()) as { warnings?: string[] }).warnings?.[0] ?? '', /runs on/);
  });
});
