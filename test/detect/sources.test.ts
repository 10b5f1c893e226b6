/**
 * Each detector source against the real simulator over HTTP, in every Flink REST shape the
 * simulator serves (1.16: location only; 1.18: taskManagerId; 1.19: endpoint + location; 2.0:
 * endpoint only, no deprecated top-level members).
 */
import { strict as assert } from 'node:assert';
import axios from 'axios';
import { silentLogger } from '../../src/core/logger';
import { FLINK_VERSIONS } from '../../src/sim/flink-jobs';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { AmrmProxyClient } from '../../src/yarn/amrm-client';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { YarnCallError } from '../../src/yarn/types';
import { SourceContext, SourceReport, DetectorSource } from '../../src/detect/source';
import { JsonValue } from '../../src/detect/state';
import { FlinkRestSource } from '../../src/detect/sources/flink-rest';
import { YarnCompletedContainersSource } from '../../src/detect/sources/yarn-containers';
import { NodeHealthSource } from '../../src/detect/sources/node-health';

const http = axios.create({ validateStatus: () => true });

/** A context like the detector's: live containers, nodes the RM knows, remembered completions. */
class Ctx {
  readonly containers = new Map<string, string>();
  hosts = new Set<string>();
  readonly cursors = new Map<string, JsonValue>();
  readonly missed: string[] = [];
  constructor(private readonly sim: RunningSimulator) {}
  async refresh(): Promise<void> {
    for (const c of await new AmrmProxyClient({ address: this.sim.url }).containers()) this.containers.set(c.containerId, c.host);
    this.hosts = new Set((await new ResourceManagerClient({ addresses: this.sim.url }).nodes()).map((n) => n.host));
  }
  async poll(s: DetectorSource): Promise<SourceReport> {
    const ctx: SourceContext = {
      now: Date.now(),
      logger: silentLogger,
      hostOfContainer: (id) => this.containers.get(id),
      isKnownHost: (h) => this.hosts.has(h),
      noteContainer: (id, h) => this.containers.set(id, h),
      cursor: this.cursors.get(s.name),
      missed: (_n, why) => this.missed.push(why),
    };
    const r = await s.poll(ctx);
    if (r.cursor !== undefined) this.cursors.set(s.name, r.cursor);
    return r;
  }
}

const post = async (url: string, body: unknown) => {
  const r = await http.post(url, body);
  assert.equal(r.status, 200, JSON.stringify(r.data));
  return r.data;
};

describe('detect/sources against the simulator', () => {
  for (const version of FLINK_VERSIONS) {
    describe(`Flink JobManager REST source, Flink ${version} shape`, () => {
      let sim: RunningSimulator;
      beforeEach(async () => {
        sim = await startSimulator({ port: 0, nodes: 8, containers: 16, seed: 5, tickMs: 0, flinkVersion: version });
      });
      afterEach(async () => {
        await sim.close();
      });

      it('attributes host failures to the container\'s node, never a global failure; a job-wide failure touches each host once; re-reads keep their keys', async () => {
        const ctx = new Ctx(sim);
        await ctx.refresh();
        const flink = new FlinkRestSource({ address: sim.url });
        const empty = await ctx.poll(flink);
        assert.deepEqual(empty.failures, []);
        assert.ok(flink.flinkVersion?.startsWith(version), flink.flinkVersion);

        const victim = sim.flink.hostsWithTaskManagers()[0];
        const onVictim = sim.cluster.taskManagers().filter((c) => c.host === victim).length;
        await post(`${sim.url}/sim/v1/flink/failures`, { host: victim, exception: 'java.io.IOException: No space left on device' });
        await post(`${sim.url}/sim/v1/flink/failures`, { hosts: 3, exception: 'java.lang.NullPointerException: user bug' });
        await post(`${sim.url}/sim/v1/flink/failures`, { global: true, exception: 'org.apache.flink.util.FlinkRuntimeException: Exceeded checkpoint tolerable failure threshold.' });

        const r = await ctx.poll(flink);
        const disk = r.failures.filter((f) => f.summary === 'java.io.IOException: No space left on device');
        assert.equal(disk.length, onVictim, 'root + concurrent exceptions of the restart');
        assert.ok(disk.every((f) => f.host === victim));
        assert.equal(new Set(disk.map((f) => f.group)).size, 1, 'one restart = one group');
        if (version === '1.16') assert.ok(disk.every((f) => f.containerId === undefined), '1.16 has no taskManagerId: attributed by location');
        else assert.ok(disk.every((f) => f.containerId !== undefined && ctx.containers.get(f.containerId) === victim));
        const npe = r.failures.filter((f) => f.signature.startsWith('java.lang.NullPointerException'));
        assert.equal(new Set(npe.map((f) => f.host)).size, 3);
        assert.equal(new Set(npe.map((f) => f.signature)).size, 1, 'the same failure reads the same on every host');
        assert.equal(r.unattributed, 1, 'the global failure');
        assert.ok(r.failures.every((f) => f.job === sim.flink.job.jid && f.source === 'flink'));

        // Nothing moved: the exceptions are not fetched again. After a change, the same entries keep their keys.
        const before = sim.flink.exceptionReads;
        assert.deepEqual((await ctx.poll(flink)).failures, []);
        assert.equal(sim.flink.exceptionReads, before);
        await post(`${sim.url}/sim/v1/flink/failures`, { host: victim });
        const again = await ctx.poll(flink);
        const keys = new Set(again.failures.map((f) => f.key));
        for (const f of r.failures) assert.ok(keys.has(f.key), `key ${f.key} kept`);
      });

      it('a task manager whose container is gone is attributed through YARN\'s completed containers; a host the RM does not know is not guessed', async () => {
        const ctx = new Ctx(sim);
        await ctx.refresh();
        const yarn = new YarnCompletedContainersSource(new AmrmProxyClient({ address: sim.url }));
        const flink = new FlinkRestSource({ address: sim.url });
        await ctx.poll(flink);
        const victim = sim.flink.hostsWithTaskManagers()[1];
        ctx.containers.clear(); // the detector restarted: it knows no live container
        await post(`${sim.url}/sim/v1/flink/failures`, { host: victim, exitStatus: 137 });
        const y = await ctx.poll(yarn);
        assert.ok(y.failures.length > 0 && y.failures.every((f) => f.host === victim && f.summary === 'exit 137'));
        const r = await ctx.poll(flink);
        assert.ok(r.failures.length > 0 && r.failures.every((f) => f.host === victim), JSON.stringify(r.failures.map((f) => f.host)));
        assert.match(r.failures[0].summary, /^java\.lang\.Exception: Container container_\S+ marked as failed\.$/);

        // Neither the container nor the host known: unattributed, not guessed.
        ctx.containers.clear();
        ctx.hosts = new Set();
        await post(`${sim.url}/sim/v1/flink/failures`, { host: sim.flink.hostsWithTaskManagers()[2] });
        const u = await ctx.poll(flink);
        assert.equal(u.failures.length, 0);
        assert.ok((u.unattributed ?? 0) > 0);
      });

      it('says so when the JobManager\'s 16-entry history dropped failures it never read', async () => {
        const ctx = new Ctx(sim);
        await ctx.refresh();
        const flink = new FlinkRestSource({ address: sim.url });
        const host = sim.flink.hostsWithTaskManagers()[0];
        await post(`${sim.url}/sim/v1/flink/failures`, { host });
        await ctx.poll(flink);
        assert.deepEqual(ctx.missed, []);
        for (let i = 0; i < 18; i++) {
          sim.cluster.clock.now(); // distinct timestamps come from the wall clock
          await new Promise((r) => setTimeout(r, 2));
          await post(`${sim.url}/sim/v1/flink/failures`, { host });
        }
        const r = await ctx.poll(flink);
        assert.equal(ctx.missed.length, 1);
        assert.match(ctx.missed[0], /no longer holds the failures between/);
        assert.equal(new Set(r.failures.map((f) => f.group)).size, 16);
      });
    });
  }

  describe('YARN completed-containers source (through the AMRM proxy)', () => {
    let sim: RunningSimulator;
    beforeEach(async () => {
      sim = await startSimulator({ port: 0, nodes: 6, containers: 20, seed: 5, tickMs: 0 });
    });
    afterEach(async () => {
      await sim.close();
    });

    it('counts only what Apps.shouldCountTowardsNodeBlacklisting counts; pages by seq; notices a dropped ring', async () => {
      const ctx = new Ctx(sim);
      const src = new YarnCompletedContainersSource(new AmrmProxyClient({ address: sim.url }));
      const tms = sim.cluster.taskManagers();
      const statuses: [number, boolean][] = [
        [1, true],
        [137, true],
        [-1000, true],
        [-108, true],
        [-109, true],
        [0, false],
        [-100, false],
        [-101, false],
        [-102, false],
        [-103, false],
        [-104, false],
        [-105, false],
        [-106, false],
        [-107, false],
      ];
      statuses.forEach(([s], i) => sim.cluster.killContainer(tms[i].id, s));
      sim.cluster.release([tms[statuses.length].id]); // our own evacuation: ABORTED
      const r = await ctx.poll(src);
      assert.deepEqual(r.failures.map((f) => f.containerId), statuses.map(([, c], i) => (c ? tms[i].id : undefined)).filter((x) => x !== undefined));
      assert.deepEqual(r.failures.map((f) => f.summary), ['exit 1', 'exit 137', 'INVALID (-1000)', 'KILLED_BY_CONTAINER_SCHEDULER (-108)', 'KILLED_FOR_EXCESS_LOGS (-109)']);
      assert.ok(r.failures.every((f) => f.host === tms.find((t) => t.id === f.containerId)!.host));
      assert.deepEqual(r.cursor, { epoch: sim.cluster.completedAfter(0).epoch, seq: statuses.length + 1 });
      assert.equal(ctx.containers.size, statuses.length + 1, 'every completion teaches where its container ran');
      assert.deepEqual((await ctx.poll(src)).failures, []);
      assert.deepEqual(ctx.missed, []);
      ctx.cursors.set(src.name, 0);
      assert.equal((await ctx.poll(src)).failures.length, 5, 'a restart from 0 re-reads (the detector dedupes by key)');
    });

    it('a restarted proxy that completed more than the old cursor gives a new epoch: the detector reads its ring from the start', async () => {
      const ctx = new Ctx(sim);
      const src = new YarnCompletedContainersSource(new AmrmProxyClient({ address: sim.url }));
      for (const tm of sim.cluster.taskManagers().slice(0, 3)) sim.cluster.killContainer(tm.id, 1);
      assert.equal((await ctx.poll(src)).failures.length, 3);
      const before = ctx.cursors.get(src.name);
      // The same address, a new proxy (a new attempt: its container ids carry RM epoch 1).
      const port = sim.port;
      await sim.close();
      sim = await startSimulator({ port, nodes: 6, containers: 20, seed: 5, tickMs: 0, epoch: 1 });
      const killed = sim.cluster.taskManagers().slice(0, 5);
      for (const tm of killed) sim.cluster.killContainer(tm.id, 1);
      // A kept-alive connection to the old proxy may be reset on its first use: that pass fails as
      // unreachable (retriable, the cursor untouched) and the detector's next pass reads.
      const r = await ctx.poll(src).catch((e: unknown) => {
        if (!(e instanceof YarnCallError) || e.status !== undefined || !e.retriable) throw e;
        return ctx.poll(src);
      });
      assert.deepEqual(r.failures.map((f) => f.containerId), killed.map((tm) => tm.id), 'seq 1..3 of the new proxy are not skipped');
      const after = ctx.cursors.get(src.name) as { epoch: string; seq: number };
      assert.equal(after.seq, 5);
      assert.notEqual(after.epoch, (before as { epoch: string }).epoch);
      assert.deepEqual(ctx.missed, []);
    });
  });

  describe('RM node-health source', () => {
    it('reports UNHEALTHY, LOST and DECOMMISSIONING nodes with their health report, through the states filter', async () => {
      const sim = await startSimulator({ port: 0, nodes: 6, containers: 6, seed: 5, tickMs: 0 });
      try {
        const ctx = new Ctx(sim);
        const src = new NodeHealthSource(new ResourceManagerClient({ addresses: sim.url }));
        assert.deepEqual((await ctx.poll(src)).health, []);
        sim.cluster.setNodeState('node0001.sim.local', 'UNHEALTHY', '1/1 local-dirs usable space is below configured utilization percentage');
        sim.cluster.setNodeState('node0002.sim.local', 'DECOMMISSIONING');
        sim.cluster.setNodeState('node0003.sim.local', 'LOST');
        sim.cluster.setNodeState('node0004.sim.local', 'DECOMMISSIONED');
        const r = await ctx.poll(src);
        assert.deepEqual(r.failures, []);
        assert.deepEqual(r.health!.map((h) => [h.host, h.state]).sort(), [
          ['node0001.sim.local', 'UNHEALTHY'],
          ['node0002.sim.local', 'DECOMMISSIONING'],
          ['node0003.sim.local', 'LOST'],
        ]);
        assert.match(r.health!.find((h) => h.state === 'UNHEALTHY')!.healthReport, /usable space/);
      } finally {
        await sim.close();
      }
    });
  });
});
