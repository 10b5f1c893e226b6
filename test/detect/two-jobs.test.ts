/**
 * Two jobs, one cluster-wide blocklist: two sidecars of two Flink applications, each beside its own
 * simulated YARN (same node names, as two jobs on one YARN), share one real ZooKeeper store, each
 * with the detector enforcing. Both jobs fail on the same sick host. Each job's detector must get
 * the host off its own job's blacklist: the second one's automatic block cannot be a new item (the
 * id is the host, and the first job's block already holds it), so it joins that item (its scope
 * gains the second job). Refused as "already blocked" instead, the second job stayed on the sick
 * host for good, and its detector tried again, and failed again, every pass.
 */
import { strict as assert } from 'node:assert';
import axios from 'axios';
import { RunningSimulator } from '../../src/sim/server';
import { Sidecar } from '../../src/sidecar/sidecar';
import { requireZookeeper } from '../support/zookeeper';
import { pollUntil } from '../support/wait';
import { DetectorReport, HostReport } from '../../src/detect/decide';
import { DetectorRig } from './rig';

const http = axios.create({ validateStatus: () => true });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The polling wait of these tests: every 20 ms, 10 s unless told. */
const waitFor = (what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<number> => pollUntil(what, cond, timeoutMs, 20);

describe('detector: two jobs on one ZooKeeper store fail on the same host', function () {
  this.timeout(40_000);
  const rig = new DetectorRig();
  const sims: RunningSimulator[] = [];
  const sidecars: Sidecar[] = [];

  before(async function () {
    requireZookeeper(this);
    await rig.zookeeper();
    for (const appNumber of [1, 2]) {
      const sim = await rig.simulator({ seed: 11, appNumber });
      sims.push(sim);
      sidecars.push(await rig.zkSidecar(sim, `/two-jobs${process.pid}`));
    }
  });

  after(() => rig.close());

  it("the second job's automatic block joins the first's item: the host leaves both jobs' blacklists; an operator's unblock ends both", async () => {
    const [appA, appB] = sims.map((s) => s.cluster.applicationId);
    const amHosts = new Set(sims.map((s) => s.cluster.currentAttempt.amHost));
    const both = sims[1].flink.hostsWithTaskManagers();
    const victim = sims[0].flink.hostsWithTaskManagers().find((h) => both.includes(h) && !amHosts.has(h));
    assert.ok(victim, 'a host running task managers of both jobs');
    for (const sim of sims) {
      for (let i = 0; i < 3; i++) {
        const r: { status: number; data: unknown } = await http.post(`${sim.url}/sim/v1/flink/failures`, { host: victim, exception: 'java.io.IOException: No space left on device' });
        assert.equal(r.status, 200, JSON.stringify(r.data));
        await sleep(5);
      }
    }

    const a = (await sidecars[0].detector!.pass())!;
    assert.equal(a.hosts.find((h) => h.host === victim)!.decision, 'block');
    const b = (await sidecars[1].detector!.pass())!;
    const bHost = b.hosts.find((h) => h.host === victim)!;
    assert.equal(bHost.decision, 'block', bHost.why);

    const item = await sidecars[1].store.get(victim);
    assert.ok(item);
    assert.equal(item.created.by, 'detector');
    assert.equal(item.scope, `${appA},${appB}`, "one item for both jobs: the second job's block joined the first's");
    for (let i = 0; i < 2; i++) {
      await waitFor(`${victim} on job ${i + 1}'s blacklist`, () => sims[i].cluster.clientBlacklistView().includes(victim));
    }

    // The next pass of either job sees its host blocked and adds nothing.
    for (const s of sidecars) assert.equal((await s.detector!.pass())!.hosts.find((h) => h.host === victim)!.decision, 'blocked');

    // An operator lifts it: both jobs' detectors take it as a lift of their own block, neither blocks again.
    assert.equal((await http.delete(`${sidecars[0].url}/blocklist/nodes/${victim}`)).status, 200);
    for (const s of sidecars) {
      const rep: DetectorReport = (await s.detector!.pass())!;
      const r: HostReport = rep.hosts.find((h) => h.host === victim)!;
      assert.equal(r.decision, 'operator-unblock', r.why);
    }
    assert.equal(await sidecars[0].store.get(victim), undefined);
    for (let i = 0; i < 2; i++) {
      await waitFor(`${victim} off job ${i + 1}'s blacklist`, () => !sims[i].cluster.clientBlacklistView().includes(victim));
    }
  });
});
