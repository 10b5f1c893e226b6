/**
 * End to end in enforce mode, all real: the YARN simulator (RM, AMRM proxy and Flink JobManager
 * faces over HTTP), a sidecar on an SQLite file with the detector on. Injected failures on one host
 * end in YARN's blacklist with a cause that explains them; a job-wide failure blames nobody; an
 * operator's unblock holds, across a sidecar restart.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import axios from 'axios';
import { MemoryAudit } from '../../src/model/audit';
import { Sidecar } from '../../src/sidecar/sidecar';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { DetectorView } from '../../src/detect/detector';
import { tempDir } from '../support/sidecar';
import { pollUntil } from '../support/wait';
import { enforcingSidecar } from './support';

const http = axios.create({ validateStatus: () => true });

/** Every 50 ms, 10 s unless told. */
const waitFor = (what: string, fn: () => Promise<boolean> | boolean, ms = 10_000): Promise<number> => pollUntil(what, fn, ms, 50);

describe('detect e2e (enforce): injected failures → automatic block → YARN blacklist', function () {
  this.timeout(60_000);
  let sim: RunningSimulator;
  let dir: string;
  const sidecars: Sidecar[] = [];
  const start = async (audit = new MemoryAudit()): Promise<Sidecar> => {
    const s = await enforcingSidecar(sim, path.join(dir, 'blocklist.db'), audit);
    sidecars.push(s);
    return s;
  };

  beforeEach(async () => {
    dir = tempDir();
    sim = await startSimulator({ port: 0, nodes: 10, containers: 30, seed: 11, tickMs: 50, flinkVersion: '1.19' });
  });
  afterEach(async () => {
    for (const s of sidecars.splice(0)) await s.close();
    await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('blocks the failing host with an explaining cause, blames nobody for a job-wide failure, and respects an operator\'s unblock across a restart', async () => {
    const audit = new MemoryAudit();
    let sc = await start(audit);
    const hosts = sim.flink.hostsWithTaskManagers().filter((h) => h !== sim.cluster.currentAttempt.amHost);
    const victim = hosts[0];
    for (let i = 0; i < 3; i++) {
      assert.equal((await http.post(`${sim.url}/sim/v1/flink/failures`, { host: victim, exception: 'java.io.IOException: No space left on device' })).status, 200);
      await new Promise((r) => setTimeout(r, 5));
    }
    for (let i = 0; i < 3; i++) {
      assert.equal((await http.post(`${sim.url}/sim/v1/flink/failures`, { hosts: hosts.slice(1, 4), exception: 'java.lang.NullPointerException: user code' })).status, 200);
      await new Promise((r) => setTimeout(r, 5));
    }
    const report = (await sc.detector!.pass())!;
    const byHost = new Map(report.hosts.map((h) => [h.host, h]));
    assert.equal(byHost.get(victim)!.decision, 'block', byHost.get(victim)!.why);
    for (const h of hosts.slice(1, 4)) assert.equal(byHost.get(h)!.decision, 'job-fault', `${h}: ${byHost.get(h)!.why}`);

    const item = await sc.store.get(victim);
    assert.ok(item, 'an ordinary item in the store');
    assert.equal(item.created.by, 'detector');
    assert.equal(item.scope, sim.cluster.applicationId);
    assert.equal(item.action, 'MARK_BLOCKED');
    assert.equal(item.endTimestamp - item.startTimestamp, 3_600_000);
    assert.match(item.cause, new RegExp(`^auto: 3 failures in 10m on ${victim.replace(/\./g, '\\.')} \\(java\\.io\\.IOException: No space left on device ×3\\); blocked for 1h; evidence: `));
    assert.ok(audit.records.some((r) => r.op === 'block' && r.who === 'detector' && r.id === victim && r.outcome === 'created'));

    await waitFor('the block reaches the proxy', async () => ((await http.get(`${sim.url}/amrm/v1/blacklist`)).data.owners.blocklist ?? []).includes(victim));
    sim.cluster.allocate();
    assert.ok(sim.cluster.schedulerBlacklistView().includes(victim), "YARN's scheduler honours it");
    assert.ok(!hosts.slice(1, 4).some((h) => sim.cluster.schedulerBlacklistView().includes(h)), 'nobody blamed for the job-wide failure');

    const view = (await http.get(`${sc.url}/detector`)).data as DetectorView;
    assert.equal(view.mode, 'enforce');
    assert.equal(view.persistent, true);
    assert.equal(view.report!.hosts.find((h) => h.host === victim)!.decision, 'block');
    assert.deepEqual(view.report!.jobFaults.map((j) => j.hosts.length), [3]);
    const metrics = (await http.get(`${sc.url}/metrics`)).data as string;
    assert.match(metrics, /blocklist_detector_blocks_total\{mode="enforce"\} 1/);
    assert.match(metrics, /blocklist_detector_suppressed_total\{reason="job-fault"\} 3/);
    assert.match(metrics, /blocklist_detector_incidents_total\{source="flink"\} 12/);

    // The next pass sees the block in effect; nothing is added twice.
    const again = (await sc.detector!.pass())!;
    assert.equal(again.hosts.find((h) => h.host === victim)!.decision, 'blocked');

    // An operator lifts it; the detector respects that, even after a restart that re-reads Flink's history.
    assert.equal((await http.delete(`${sc.url}/blocklist/nodes/${victim}`)).status, 200);
    const after = (await sc.detector!.pass())!;
    assert.equal(after.hosts.find((h) => h.host === victim)!.decision, 'operator-unblock');
    await sc.close();
    sidecars.splice(0);
    sc = await start();
    const restarted = (await sc.detector!.pass())!;
    assert.equal(restarted.hosts.find((h) => h.host === victim)!.decision, 'operator-unblock', 'state kept in the store');
    assert.equal(await sc.store.get(victim), undefined);
    await waitFor('the removal reaches the proxy', async () => !((await http.get(`${sim.url}/amrm/v1/blacklist`)).data.blacklist as string[]).includes(victim));
  });

  it('YARN exit codes alone block a host (process exits count, our own releases do not)', async () => {
    const sc = await start();
    const victim = sim.flink.hostsWithTaskManagers().find((h) => h !== sim.cluster.currentAttempt.amHost)!;
    for (let i = 0; i < 3; i++) {
      const tm = sim.cluster.taskManagers().find((c) => c.host === victim);
      assert.ok(tm, 'a task manager on the victim');
      assert.equal((await http.post(`${sim.url}/sim/v1/containers/${tm.id}/kill`, { exitStatus: 1 })).status, 200);
      sim.cluster.allocate();
      // Replacements may land elsewhere; place one back on the victim if needed.
      if (!sim.cluster.taskManagers().some((c) => c.host === victim)) {
        const other = sim.cluster.taskManagers().find((c) => c.host !== victim)!;
        sim.cluster.release([other.id]);
        for (let k = 0; k < 20 && !sim.cluster.taskManagers().some((c) => c.host === victim); k++) {
          sim.cluster.release([sim.cluster.taskManagers().find((c) => c.host !== victim)!.id]);
          sim.cluster.allocate();
        }
      }
    }
    const r = (await sc.detector!.pass())!;
    const h = r.hosts.find((x) => x.host === victim)!;
    assert.equal(h.decision, 'block', h.why);
    assert.match((await sc.store.get(victim))!.cause, /exit 1 ×3/);
    // The releases this test made (ABORTED) were seen and not counted anywhere.
    assert.ok(r.hosts.every((x) => x.host === victim || x.score === 0));
  });
});
