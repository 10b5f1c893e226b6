/**
 * The AMRM proxy contract's owners and completed containers, client against the real simulator over
 * HTTP: each owner keeps its own set, YARN gets the union, bad owners and "*" are refused with 400
 * and change nothing; completed containers page by seq.
 */
import { strict as assert } from 'node:assert';
import axios from 'axios';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { AmrmProxyClient } from '../../src/yarn/amrm-client';
import { YarnCallError } from '../../src/yarn/types';

const http = axios.create({ validateStatus: () => true });
const h = (i: number): string => `node${String(i).padStart(4, '0')}.sim.local`;

async function rejects(p: Promise<unknown>, check: (e: YarnCallError) => void): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof YarnCallError, `expected a YarnCallError, got ${String(e)}`);
    check(e);
    return;
  }
  assert.fail('expected a rejection');
}

describe('yarn/amrm contract: blacklist owners and completed containers (client ↔ simulator over HTTP)', () => {
  let sim: RunningSimulator;
  let amrm: AmrmProxyClient;
  beforeEach(async () => {
    sim = await startSimulator({ port: 0, nodes: 12, containers: 24, seed: 9, tickMs: 0 });
    amrm = new AmrmProxyClient({ address: sim.url });
  });
  afterEach(async () => {
    await sim.close();
  });

  it('owners: the default owner is "blocklist"; another owner\'s hosts stay in the union when the sidecar removes them', async () => {
    await amrm.updateBlacklist({ additions: [h(1), h(2)], removals: [] });
    const put = await http.put(`${sim.url}/sim/v1/blacklist/owners/am`, { hosts: [h(2), h(3)] });
    assert.equal(put.status, 200);
    assert.deepEqual(await amrm.blacklist(), { blacklist: [h(1), h(2), h(3)], owners: { am: [h(2), h(3)], blocklist: [h(1), h(2)] } });

    await amrm.updateBlacklist({ additions: [], removals: [h(2), h(3)] });
    assert.deepEqual(await amrm.blacklist(), { blacklist: [h(1), h(2), h(3)], owners: { am: [h(2), h(3)], blocklist: [h(1)] } });
    sim.cluster.allocate();
    assert.deepEqual(sim.cluster.schedulerBlacklistView(), [h(1), h(2), h(3)], 'YARN honours the union');

    await amrm.updateBlacklist({ additions: [h(7)], removals: [h(2)] }, 'am');
    sim.cluster.allocate();
    assert.deepEqual(sim.cluster.schedulerBlacklistView(), [h(1), h(3), h(7)]);
    assert.deepEqual((await amrm.blacklist()).owners, { am: [h(3), h(7)], blocklist: [h(1)] });
  });

  it('owners: a host in both lists ends up removed; "*", a bad owner or a bad body → 400 and nothing changes', async () => {
    await amrm.updateBlacklist({ additions: [h(4), h(5)], removals: [h(5)] }, 'speculation');
    assert.deepEqual((await amrm.blacklist()).owners, { speculation: [h(4)] });
    await rejects(amrm.updateBlacklist({ additions: ['*'], removals: [h(4)] }, 'speculation'), (e) => {
      assert.equal(e.status, 400);
      assert.equal(e.retriable, false);
      assert.match(e.message, /Cannot add \* to the blacklist!/);
    });
    await rejects(amrm.updateBlacklist({ additions: [h(6)], removals: [h(4)] }, 'no spaces'), (e) => {
      assert.equal(e.status, 400);
      assert.match(e.message, /"owner" must be a short token/);
    });
    for (const body of [{ owner: 7, blacklistAdditions: [h(6)] }, { owner: '', blacklistAdditions: [h(6)] }, { owner: 'a/b', blacklistAdditions: [h(6)] }]) {
      const r = await http.post(`${sim.url}/amrm/v1/blacklist`, body);
      assert.equal(r.status, 400, JSON.stringify(body));
    }
    assert.deepEqual(await amrm.blacklist(), { blacklist: [h(4)], owners: { speculation: [h(4)] } });
    assert.equal((await http.put(`${sim.url}/sim/v1/blacklist/owners/am`, { hosts: 'x' })).status, 400);
    assert.equal((await http.put(`${sim.url}/sim/v1/blacklist/owners/am`, { hosts: ['*'] })).status, 400);
  });

  it('completed containers: release → -100, an injected kill → its exit status, paging by `after`, bad `after` → 400', async () => {
    const tms = await amrm.containers();
    await amrm.release([tms[0].containerId]);
    const kill = await http.post(`${sim.url}/sim/v1/containers/${tms[1].containerId}/kill`, { exitStatus: 1, diagnostics: 'Exception from container-launch. Exit code: 1' });
    assert.equal(kill.status, 200);
    const first = await amrm.completedContainers(0);
    assert.equal(first.next, 2);
    assert.deepEqual(first.containers.map((c) => [c.seq, c.containerId, c.host, c.nodeId, c.exitStatus]), [
      [1, tms[0].containerId, tms[0].host, tms[0].nodeId, -100],
      [2, tms[1].containerId, tms[1].host, tms[1].nodeId, 1],
    ]);
    assert.equal(first.containers[0].diagnostics, 'Container released by application');
    assert.ok(first.containers.every((c) => Math.abs(c.finishedAt - Date.now()) < 60_000));

    assert.match(first.epoch ?? '', /^[0-9a-f]{16}$/, 'the page names the ring\'s epoch');
    assert.deepEqual(await amrm.completedContainers(first.next), { containers: [], next: 2, epoch: first.epoch });
    await http.post(`${sim.url}/sim/v1/containers/${tms[2].containerId}/kill`);
    const second = await amrm.completedContainers(first.next);
    assert.deepEqual(second.containers.map((c) => [c.seq, c.exitStatus]), [[3, -104]]);
    assert.equal(second.next, 3);

    for (const q of ['-1', 'abc', '1.5', '']) {
      const r = await http.get(`${sim.url}/amrm/v1/completed-containers?after=${q}`);
      assert.equal(r.status, 400, q);
      assert.match(r.data.errors[0], /"after" must be a non-negative integer/);
    }
    assert.equal((await http.post(`${sim.url}/sim/v1/containers/${tms[3].containerId}/kill`, { exitStatus: 'x' })).status, 400);
    await assert.rejects(amrm.completedContainers(-1), /non-negative integer/);
  });
});
