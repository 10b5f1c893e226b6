/**
 * An operator's block and the detector on the same host (enforce mode, all real: the YARN
 * simulator's RM, AMRM proxy and Flink faces over HTTP, a sidecar on an SQLite file). "Failures on
 * a blocked host do not count against it again" (docs/detector.md): an operator blocks a sick
 * host (MARK_BLOCKED: its task managers stay and keep failing), repairs it, and lifts the block.
 * The failures it had while blocked must not block it again at once — they did: the detector
 * counted them the moment the operator's block was gone and put its own one-hour block on the host
 * the operator had just declared healthy.
 */
import { strict as assert } from 'node:assert';
import axios from 'axios';
import { Sidecar } from '../../src/sidecar/sidecar';
import { RunningSimulator } from '../../src/sim/server';
import { HostReport } from '../../src/detect/decide';
import { pollUntil } from '../support/wait';
import { DetectorRig } from './rig';

const http = axios.create({ validateStatus: () => true });

/** Every 20 ms, 10 s unless told. */
const waitFor = (what: string, fn: () => boolean | Promise<boolean>, ms = 10_000): Promise<number> => pollUntil(what, fn, ms, 20);

describe('detector beside an operator: failures while the operator blocked a host are not counted after the unblock', function () {
  this.timeout(30_000);
  const rig = new DetectorRig();
  let sim: RunningSimulator;
  let sc: Sidecar;

  before(async () => {
    sim = await rig.simulator({ seed: 11 });
    sc = await rig.sqliteSidecar(sim);
  });
  after(() => rig.close());

  const decisionOf = async (host: string): Promise<HostReport> => (await sc.detector!.pass())!.hosts.find((h) => h.host === host)!;

  it("an operator's MARK_BLOCKED, three failures under it, the operator's unblock: no automatic block; a fresh failure run afterwards still blocks", async () => {
    const victim = sim.flink.hostsWithTaskManagers().find((h) => h !== sim.cluster.currentAttempt.amHost)!;
    const put = await http.put(`${sc.url}/blocklist/nodes/${victim}`, { action: 'MARK_BLOCKED', cause: 'ops: disk errors, replacing the disk', timeout: 600_000 });
    assert.equal(put.status, 201);
    const fail = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        assert.equal((await http.post(`${sim.url}/sim/v1/flink/failures`, { host: victim, exception: 'java.io.IOException: Input/output error' })).status, 200);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    await fail(3);
    const under = await decisionOf(victim);
    assert.equal(under.decision, 'blocked', under.why);

    // Repaired: the operator lifts the block.
    assert.equal((await http.delete(`${sc.url}/blocklist/nodes/${victim}`)).status, 200);
    const after = await decisionOf(victim);
    assert.notEqual(after.decision, 'block', `blocked again at once for failures it had while blocked: ${after.why}`);
    assert.equal(after.score, 0, after.why);
    assert.equal(await sc.store.get(victim), undefined, 'no automatic block on the host the operator just lifted');
    await waitFor('the unblock reaches the proxy', async () => !((await http.get(`${sim.url}/amrm/v1/blacklist`)).data.blacklist as string[]).includes(victim));

    // New failures after the unblock count as ever.
    await fail(3);
    const again = await decisionOf(victim);
    assert.equal(again.decision, 'block', again.why);
    assert.equal((await sc.store.get(victim))?.created.by, 'detector');
  });
});
