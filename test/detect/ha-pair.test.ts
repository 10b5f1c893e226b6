/**
 * Two sidecars of one job (an HA pair, or the old and the new one while a restart overlaps) on one
 * real ZooKeeper store, beside one simulated YARN and Flink: one runs the detector at a time (the
 * other stands by, leadership.ts), and both keep the job's one detector state record. What one of
 * them learns must reach the other when it takes over: here, that an operator lifted the automatic
 * block of a host. With a read-once, overwrite-always record, the
 * second sidecar never saw the first one's block, counted the same failures, and blocked the host
 * the operator had just unblocked — and its write erased the first one's record of the unblock.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import axios from 'axios';
import { RunningSimulator } from '../../src/sim/server';
import { Sidecar } from '../../src/sidecar/sidecar';
import { decodeState } from '../../src/detect/state';
import { BlocklistStore } from '../../src/store/store';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { requireZookeeper } from '../support/zookeeper';
import { DetectorRig } from './rig';

const http = axios.create({ validateStatus: () => true });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('detector: two sidecars of one job on one ZooKeeper store (HA pair)', function () {
  this.timeout(40_000);
  const rig = new DetectorRig();
  let sim: RunningSimulator | undefined;
  const sidecars: Sidecar[] = [];

  before(async function () {
    requireZookeeper(this);
    await rig.zookeeper();
    sim = await rig.simulator({ seed: 5 });
    for (let i = 0; i < 2; i++) sidecars.push(await rig.zkSidecar(sim, `/ha-pair${process.pid}`));
  });

  after(() => rig.close());

  it("an operator's unblock noticed by one sidecar is respected by the other; the record keeps it", async () => {
    const [a, b] = sidecars;
    const amHost = sim!.cluster.currentAttempt.amHost;
    const victim = sim!.flink.hostsWithTaskManagers().find((h) => h !== amHost);
    assert.ok(victim);
    for (let i = 0; i < 3; i++) {
      const r: { status: number; data: unknown } = await http.post(`${sim!.url}/sim/v1/flink/failures`, { host: victim, exception: 'java.io.IOException: No space left on device' });
      assert.equal(r.status, 200, JSON.stringify(r.data));
      await sleep(5);
    }
    assert.equal((await a.detector!.pass())!.hosts.find((h) => h.host === victim)!.decision, 'block');
    assert.equal((await a.store.get(victim))?.created.by, 'detector');

    // The operator lifts it before B's next pass; A notices.
    assert.equal((await http.delete(`${a.url}/blocklist/nodes/${victim}`)).status, 200);
    assert.equal((await a.detector!.pass())!.hosts.find((h) => h.host === victim)!.decision, 'operator-unblock');

    // A's detector stops (its sidecar goes; it gives up the job's detector lease, which it held:
    // B stood by until now). B takes over and reads the same failures from the same JobManager:
    // it must not block the host again.
    assert.equal(b.detector!.view().runner.role, 'standby');
    await a.detector!.stop();
    const rb = (await b.detector!.pass())!.hosts.find((h) => h.host === victim)!;
    assert.equal(rb.decision, 'operator-unblock', rb.why);
    assert.equal(await b.store.get(victim), undefined, 'the host the operator unblocked stays unblocked');

    const rec = decodeState(await b.store.readRecord!(`detector.${sim!.cluster.applicationId}`)).state;
    assert.equal(rec.hosts[victim]?.lastBlock?.endedBy, 'operator', "the record still says an operator lifted A's block");
    assert.equal(b.detector!.view().runner.role, 'runner');
    // And B, on its next pass, still says so too.
    assert.equal((await b.detector!.pass())!.hosts.find((h) => h.host === victim)!.decision, 'operator-unblock');
  });

  /** Two handles of one store (two sidecars): only a writer that saw the current text replaces it. */
  async function compareAndSet(one: BlocklistStore, two: BlocklistStore): Promise<void> {
    const key = `detector.cas-${process.pid}`;
    assert.equal(await one.replaceRecord!(key, 'x', 'a'), false, 'absent is not "x"');
    assert.equal(await one.replaceRecord!(key, undefined, 'a'), true);
    assert.equal(await two.replaceRecord!(key, undefined, 'b'), false, 'created meanwhile: not replaced');
    assert.equal(await two.replaceRecord!(key, 'a', 'b'), true);
    assert.equal(await one.replaceRecord!(key, 'a', 'c'), false, 'changed meanwhile: not replaced');
    assert.equal(await one.readRecord!(key), 'b');
    // The records of jobs that are gone: listed by prefix, removed only as they were read.
    assert.deepEqual(await two.recordKeys!(key), [key]);
    assert.equal(await two.removeRecord!(key, 'a'), false, 'changed since: not removed');
    assert.equal(await two.removeRecord!(key, 'b'), true);
    assert.equal(await one.readRecord!(key), undefined);
    assert.deepEqual(await one.recordKeys!(key), []);
    assert.equal(await one.removeRecord!(key, 'b'), false, 'gone');
  }

  it('the compare-and-set of a record (write and remove), on ZooKeeper and on one SQLite file opened twice', async () => {
    await compareAndSet(sidecars[0].store, sidecars[1].store);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ha-pair-'));
    const one = new SqliteStore(path.join(dir, 'b.db'), { writeThread: true });
    const two = new SqliteStore(path.join(dir, 'b.db'));
    try {
      await compareAndSet(one, two);
    } finally {
      await one.close();
      await two.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
