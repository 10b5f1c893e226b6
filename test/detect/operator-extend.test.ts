/**
 * The automatic-block cap beside an operator (enforce mode, all real: the YARN simulator's RM, AMRM
 * proxy and Flink faces over HTTP, a sidecar on an SQLite file; 10 RUNNING nodes × 0.1 = one
 * automatic block at a time). An operator who extends an automatic block through the REST API
 * (PUT with allowMerge and a later end) has made it theirs: it no longer takes the detector's one
 * slot. It did, until the extended end — a day of a sick second host left on the job because the
 * operator agreed with the detector about the first.
 */
import { strict as assert } from 'node:assert';
import axios from 'axios';
import { Sidecar } from '../../src/sidecar/sidecar';
import { RunningSimulator } from '../../src/sim/server';
import { HostReport } from '../../src/detect/decide';
import { DetectorRig } from './rig';

const http = axios.create({ validateStatus: () => true });

describe('detector cap beside an operator who extends an automatic block', function () {
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
  const fail = async (host: string, exception: string): Promise<void> => {
    for (let i = 0; i < 3; i++) {
      assert.equal((await http.post(`${sim.url}/sim/v1/flink/failures`, { host, exception })).status, 200);
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  it('the extended block frees the slot at once: the next sick host is blocked', async () => {
    const [first, second] = sim.flink.hostsWithTaskManagers().filter((h) => h !== sim.cluster.currentAttempt.amHost);
    assert.ok(first && second);
    await fail(first, 'java.io.IOException: No space left on device');
    assert.equal((await decisionOf(first)).decision, 'block');
    await fail(second, 'java.io.IOException: Input/output error');
    const capped = await decisionOf(second);
    assert.equal(capped.decision, 'cap', capped.why);

    const item = await sc.store.get(first);
    assert.ok(item);
    const put = await http.put(`${sc.url}/blocklist/nodes/${first}`, { action: item.action, cause: 'ops: confirmed, disk replacement tomorrow', timeout: 24 * 3_600_000, allowMerge: true, scope: item.scope });
    assert.equal(put.status, 202, JSON.stringify(put.data));

    const now = await decisionOf(second);
    assert.equal(now.decision, 'block', now.why);
    assert.equal((await sc.store.get(second))?.created.by, 'detector');
    const view = sc.detector!.view().report!;
    assert.equal(view.hosts.find((h) => h.host === first)!.lastBlock?.takenOverAt !== undefined, true, 'GET /detector shows the block was taken over');
  });
});
