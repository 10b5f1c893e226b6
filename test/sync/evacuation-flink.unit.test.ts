/**
 * Evacuations a Flink job survives, end to end in-process: the engine over the simulator's cluster
 * and its simulated JobManager (src/sim/flink-runtime.ts, read through the REST parsers of
 * src/flink/json.ts), a memory store and a FakeClock. One rule per test (src/sync/evacuation-steps.ts).
 */
import { strict as assert } from 'node:assert';
import { EVACUATE, MARK_BLOCKED } from '../../src/model/item';
import { MemoryAudit } from '../../src/model/audit';
import { nodeItem, tmItem } from './fakes';
import { Rig, RigOptions, closeRigs, rig } from './rig';

afterEach(closeRigs);

/** A rig with a streaming job on Flink: `busy` task managers on host 1 hold its slots, `idle` ones on host 2 hold none. */
async function scene(o: { busy?: number; idle?: number; rig?: RigOptions } = {}): Promise<{ r: Rig; h1: string; h2: string; busy: string[]; idle: string[] }> {
  const r = await rig({ flink: { checkpointIntervalMs: 60_000 }, ...o.rig, ...(o.rig?.flink ? { flink: { checkpointIntervalMs: 60_000, ...o.rig.flink } } : {}) });
  const [h1, h2] = [r.host(1), r.host(2)];
  const busy = r.cluster.placeOn(h1, o.busy ?? 2).sort();
  const idle = r.cluster.placeOn(h2, o.idle ?? 2).sort();
  r.flink!.runtime.parallelism = busy.length * 2;
  r.flink!.runtime.sync();
  return { r, h1, h2, busy, idle };
}

const released = (r: Rig): string[] => r.proxy.releaseCalls.flat().sort();

/** Moves the fake time on one poll interval at a time, so that every poll tick's reads run (one big step would run one). */
async function seconds(r: Rig, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await r.step(1000);
}

describe('evacuation with Flink: FLIP-224 slot rules (MARK_BLOCKED)', () => {
  it('a MARK_BLOCKED node: its idle task managers are released (after two reads of Flink agree), its busy ones stay; the status says which and why', async () => {
    const { r, h1, h2, busy, idle } = await scene();
    await r.block(nodeItem(h2));
    assert.deepEqual(r.proxy.releaseCalls, [], 'one read of Flink is not enough');
    assert.equal(r.item(h2)?.evacuation?.waiting?.code, 'busy');
    await r.step(1000);
    assert.deepEqual(released(r), idle, 'idle in two reads in a row: released');
    await r.block(nodeItem(h1));
    await seconds(r, 3);
    assert.deepEqual(released(r), idle, 'busy task managers of a MARK_BLOCKED node stay');
    const st = r.item(h1);
    assert.equal(st?.state, 'applied');
    assert.equal(st?.evacuation?.action, MARK_BLOCKED);
    assert.equal(st?.evacuation?.phase, 'WAIT_CONTAINER');
    assert.deepEqual(st?.evacuation?.busy, busy);
    assert.match(st?.evacuation?.waiting?.detail ?? '', /busy \(2 of 2 slots in use\): released once idle/);
    await seconds(r, 10); // the containers are read again (yarn.refresh-interval): the released ones are gone
    assert.equal(r.item(h2)?.evacuation?.phase, 'READY');
    assert.deepEqual(r.item(h2)?.evacuation?.released, idle);
    assert.match(await r.metrics.text(), /blocklist_evacuation_taskmanagers_released_total\{reason="idle"\} 2/);
  });

  it('a busy task manager of a MARK_BLOCKED node is released once it becomes idle, never before', async () => {
    const { r, h1, busy } = await scene({ idle: 0 });
    await r.block(nodeItem(h1));
    await seconds(r, 10);
    assert.deepEqual(r.proxy.releaseCalls, []);
    r.flink!.runtime.parallelism = 2; // the job scales down: one of the two gives its slots back
    await seconds(r, 2);
    assert.deepEqual(released(r), [busy[1]]);
  });

  it('a MARK_BLOCKED task manager item is released once idle (it used to change nothing and claim "Flink refuses its slots")', async () => {
    const { r, h1, busy } = await scene({ idle: 0 });
    const item = tmItem(h1, busy[0]);
    await r.block(item);
    await seconds(r, 3);
    assert.deepEqual(r.proxy.releaseCalls, []);
    let st = r.item(item.id);
    assert.equal(st?.state, 'applied');
    assert.match(st?.detail ?? '', /released once idle/);
    assert.doesNotMatch(st?.detail ?? '', /refuses/);
    assert.equal(st?.evacuation?.phase, 'WAIT_CONTAINER');
    r.flink!.runtime.parallelism = 2;
    await seconds(r, 2);
    // Slots are taken in id order: the first task manager keeps the job's two slots; this one held them.
    assert.deepEqual(released(r), [], 'still busy');
    r.flink!.runtime.parallelism = 0;
    await seconds(r, 2);
    assert.deepEqual(released(r), [busy[0]]);
    await seconds(r, 10); // the containers are read again (yarn.refresh-interval)
    st = r.item(item.id);
    assert.equal(st?.evacuation?.phase, 'READY');
    assert.deepEqual(r.blacklist(), [], 'the node is never blacklisted');
  });

  it("without Flink's REST API nothing on a MARK_BLOCKED node is released, and the status says why", async () => {
    const { r, h2 } = await scene();
    r.flink!.down = true;
    await r.block(nodeItem(h2));
    await seconds(r, 5);
    assert.deepEqual(r.proxy.releaseCalls, []);
    const st = r.item(h2);
    assert.equal(st?.evacuation?.waiting?.code, 'flink-unknown');
    assert.match(st?.evacuation?.waiting?.detail ?? '', /cannot be read .*no idle task manager is released/);
  });
});

describe('evacuation with Flink: WAIT_CONTAINER, checkpoint, budget', () => {
  it('EVACUATE with a grace period: an idle task manager goes at once, the busy ones at the deadline', async () => {
    const r = await rig({ flink: {} });
    const h = r.host(1);
    const [a, b] = r.cluster.placeOn(h, 2).sort();
    r.flink!.runtime.parallelism = 2; // a holds both slots, b none
    await r.block(nodeItem(h, { action: EVACUATE, evacuationTimeout: 60 }));
    await r.step(1000);
    assert.deepEqual(released(r), [b], 'idle: released before the deadline');
    assert.equal(r.item(h)?.evacuation?.phase, 'WAIT_CONTAINER');
    assert.equal(r.item(h)?.evacuation?.waiting?.code, 'busy');
    await seconds(r, 57);
    assert.deepEqual(released(r), [b]);
    await seconds(r, 2);
    assert.deepEqual(released(r), [a, b].sort(), 'at the deadline the busy one goes (no checkpointing: at once)');
  });

  it('checkpoint-aligned release: at the deadline a streaming job gets a checkpoint, the release follows its completion (not a poll later), and Flink fails over once', async () => {
    const audit = new MemoryAudit();
    const { r, h1, busy } = await scene({ rig: { audit } });
    await r.block(nodeItem(h1, { action: EVACUATE, evacuationTimeout: 0 }));
    let st = r.item(h1)?.evacuation;
    assert.equal(st?.phase, 'CHECKPOINTING');
    assert.equal(st?.checkpoint?.status, 'IN_PROGRESS');
    assert.equal(st?.waiting?.code, 'checkpoint');
    assert.deepEqual(r.proxy.releaseCalls, [], 'no release before the checkpoint');
    await r.step(199);
    assert.deepEqual(r.proxy.releaseCalls, []);
    await r.step(101);
    assert.deepEqual(released(r), busy, 'released within one checkpoint poll (50 ms) of its completion');
    st = r.item(h1)?.evacuation;
    assert.equal(st?.phase, 'RELEASING');
    assert.equal(st?.checkpoint?.status, 'COMPLETED');
    assert.equal(typeof st?.checkpoint?.id, 'number');
    r.cluster.allocate();
    await seconds(r, 3);
    assert.equal(r.item(h1)?.evacuation?.phase, 'READY');
    assert.equal(r.flink!.runtime.restarts, 1, 'one failover');
    assert.equal(r.flink!.runtime.state, 'RUNNING');
    const metrics = await r.metrics.text();
    assert.match(metrics, /blocklist_evacuation_taskmanagers_released_total\{reason="checkpointed"\} 2/);
    assert.match(metrics, /blocklist_evacuation_checkpoints_total\{result="completed"\} 1/);
    assert.deepEqual(audit.records.map((x) => [x.op, x.outcome]), [['evacuation-checkpoint', 'triggered'], ['evacuation-checkpoint', 'completed'], ['evacuation-release', 'released'], ['evacuation-release', 'released']]);
    assert.match(audit.records[2].detail ?? '', /right after a completed checkpoint/);
  });

  it('a failed checkpoint: released at once without it (TIMEOUT), and the status says so', async () => {
    const { r, h1, busy } = await scene();
    r.flink!.runtime.triggerBehaviour = 'fail';
    await r.block(nodeItem(h1, { action: EVACUATE, evacuationTimeout: 0 }));
    for (let i = 0; i < 3; i++) await r.step(100);
    assert.deepEqual(released(r), busy);
    const st = r.item(h1)?.evacuation;
    assert.equal(st?.phase, 'TIMEOUT');
    assert.equal(st?.checkpoint?.status, 'FAILED');
    assert.match(st?.checkpoint?.detail ?? '', /expired before completing/);
  });

  it('a slow checkpoint: released at evacuation.checkpoint.timeout from the trigger, without it', async () => {
    const { r, h1, busy } = await scene({ rig: { settings: { checkpointTimeoutMs: 5000 } } });
    r.flink!.runtime.triggerBehaviour = 'never';
    await r.block(nodeItem(h1, { action: EVACUATE, evacuationTimeout: 0 }));
    await r.step(4900);
    assert.deepEqual(r.proxy.releaseCalls, []);
    assert.equal(r.item(h1)?.evacuation?.phase, 'CHECKPOINTING');
    await r.step(200);
    assert.deepEqual(released(r), busy);
    assert.equal(r.item(h1)?.evacuation?.phase, 'TIMEOUT');
    assert.equal(r.item(h1)?.evacuation?.checkpoint?.status, 'TIMED_OUT');
  });

  for (const why of ['Flink 1.16 (no trigger)', "the RM's web proxy (no POST)"]) {
    it(`no trigger possible (${why}): the release waits for the next periodic checkpoint`, async () => {
      const flink = why.startsWith('Flink') ? { version: '1.16' as const, checkpointIntervalMs: 10_000 } : { canPost: false, checkpointIntervalMs: 10_000 };
      const { r, h1, busy } = await scene({ rig: { flink } });
      await seconds(r, 3);
      await r.block(nodeItem(h1, { action: EVACUATE, evacuationTimeout: 0 }));
      const st = r.item(h1)?.evacuation;
      assert.equal(st?.checkpoint?.status, 'PERIODIC');
      await seconds(r, 6);
      assert.deepEqual(r.proxy.releaseCalls, [], 'the periodic one completes at 10.2 s');
      await seconds(r, 2);
      assert.deepEqual(released(r), busy);
      assert.equal(r.item(h1)?.evacuation?.checkpoint?.status, 'COMPLETED');
    });
  }

  it('a job without checkpointing is released at the deadline at once (TIMEOUT: no checkpoint to wait for)', async () => {
    const { r, h1, busy } = await scene({ rig: { flink: { checkpointIntervalMs: undefined } } });
    await r.block(nodeItem(h1, { action: EVACUATE, evacuationTimeout: 0 }));
    assert.deepEqual(released(r), busy);
    assert.equal(r.item(h1)?.evacuation?.phase, 'TIMEOUT');
  });

  it('the disruption budget: max-parallel 1 releases one task manager per step, the next once the job runs again with the released one gone and its failover counted', async () => {
    const { r, h1, busy } = await scene({ busy: 3, idle: 0, rig: { settings: { maxParallel: 1 }, flink: { checkpointIntervalMs: undefined } } });
    await r.block(nodeItem(h1, { action: EVACUATE, evacuationTimeout: 0 }));
    assert.deepEqual(released(r), [busy[0]]);
    const st = r.item(h1)?.evacuation;
    assert.equal(st?.step?.number, 1);
    assert.equal(st?.waiting?.code, 'budget');
    await r.step(400);
    assert.equal(r.proxy.releaseCalls.length, 1, 'Flink has not noticed yet: the unchanged job is no proof');
    r.cluster.allocate();
    await seconds(r, 3);
    assert.equal(r.flink!.runtime.restarts, 1);
    assert.deepEqual(released(r), busy.slice(0, 2), 'step 2 once the job ran again');
    r.cluster.allocate();
    await seconds(r, 3);
    r.cluster.allocate();
    await seconds(r, 3);
    assert.deepEqual(released(r), busy);
    assert.equal(r.flink!.runtime.restarts, 3, 'one failover per step');
  });

  it('the default budget (0: all at once): 3 task managers go in one step, one failover', async () => {
    const { r, h1, busy } = await scene({ busy: 3, idle: 0 });
    await r.block(nodeItem(h1, { action: EVACUATE, evacuationTimeout: 0 }));
    for (let i = 0; i < 3; i++) await r.step(100);
    assert.deepEqual(r.proxy.releaseCalls, [busy]);
    r.cluster.allocate();
    await seconds(r, 5);
    assert.equal(r.flink!.runtime.restarts, 1);
    assert.equal(r.item(h1)?.evacuation?.phase, 'READY');
  });

  it('never a step while the job is restarting: a deadline that falls in a failover waits for the job to run again', async () => {
    const { r, h1, h2, busy } = await scene({ busy: 2, idle: 2, rig: { flink: { checkpointIntervalMs: undefined } } });
    r.flink!.runtime.parallelism = 8; // every task manager busy
    r.flink!.runtime.sync();
    r.cluster.killContainer(r.cluster.taskManagers().find((c) => c.host === h2)!.id);
    r.flink!.runtime.sync(); // the simulated JobManager sees the container go now
    await r.step(600); // and notices it lost: RESTARTING
    r.flink!.runtime.sync();
    assert.equal(r.flink!.runtime.state, 'RESTARTING');
    await r.block(nodeItem(h1, { action: EVACUATE, evacuationTimeout: 0 }));
    assert.deepEqual(r.proxy.releaseCalls, []);
    assert.equal(r.item(h1)?.evacuation?.waiting?.code, 'job-not-running');
    assert.equal(r.item(h1)?.evacuation?.phase, 'RELEASING');
    r.flink!.runtime.parallelism = 6;
    r.cluster.allocate();
    await seconds(r, 3);
    assert.deepEqual(released(r), busy, 'released once the job runs again');
  });

  for (const between of ['nothing', 'a kill -9 of another task manager'] as const) {
    it(`evacuations one after another, the first one's block lifted as soon as the job runs again and ${between} between: each is judged on a fresh read of Flink (a step that wanted nothing kept every later pass on an old one)`, async () => {
      const { r, busy } = await scene({ busy: 0, idle: 0 });
      const hosts = [1, 2, 3, 4].map((i) => r.host(i));
      const tms = hosts.map((h) => r.cluster.placeOn(h, 1)[0]);
      r.flink!.runtime.parallelism = 8; // every task manager busy
      r.flink!.runtime.sync();
      assert.deepEqual(busy, []);
      for (const [i, h] of hosts.slice(0, 3).entries()) {
        await r.block(nodeItem(h, { action: EVACUATE, evacuationTimeout: 0 }));
        await seconds(r, 2);
        assert.deepEqual(released(r).filter((c) => c === tms[i]), [tms[i]], `evacuation ${i + 1}: released after its checkpoint`);
        assert.equal(r.item(h)?.evacuation?.checkpoint?.status ?? 'COMPLETED', 'COMPLETED');
        r.cluster.allocate();
        await r.step(1000);
        await r.unblock(h); // the job runs again: the block goes before the sidecar counted the failover
        if (between !== 'nothing' && i === 0) {
          r.cluster.killContainer(tms[3]);
          r.flink!.runtime.sync();
          await r.step(1000);
          r.cluster.allocate();
        }
        await seconds(r, 5);
        const read = r.status().flink;
        assert.ok(read?.state === 'read' && (read.readSecondsAgo ?? 99) <= 5, `Flink read while the step was open (${JSON.stringify(read)})`);
        const job = read.jobs[0];
        assert.deepEqual([job.state, job.tasks, (job.restarts ?? 0) > i], ['RUNNING', { running: 8, total: 8 }, true], 'the job as the step was judged: running every task, the failover counted');
      }
      assert.deepEqual(released(r).filter((c) => tms.includes(c)), tms.slice(0, 3).sort(), 'the fourth (killed or not) was never evacuated');
      assert.match(await r.metrics.text(), /blocklist_evacuation_taskmanagers_released_total\{reason="checkpointed"\} [3-9]/, 'each after its checkpoint');
    });
  }

  it("Flink's REST API unreachable: the deadline releases at once, as YARN does (TIMEOUT), and the status says why", async () => {
    const { r, h1, busy } = await scene();
    r.flink!.down = true;
    await r.block(nodeItem(h1, { action: EVACUATE, evacuationTimeout: 0 }));
    assert.deepEqual(released(r), busy);
    const st = r.item(h1)?.evacuation;
    assert.equal(st?.phase, 'TIMEOUT');
    assert.match(await r.metrics.text(), /blocklist_evacuation_taskmanagers_released_total\{reason="blind"\} 2/);
  });
});

describe('evacuation with Flink: batch jobs and result partitions', () => {
  /** A batch job on 4 task managers: the source stage (10 s) on all of them, then a sink that reads their partitions (10 s). */
  async function batch(o: RigOptions = {}): Promise<{ r: Rig; h: string; tms: string[] }> {
    const r = await rig({ flink: { type: 'BATCH', sourceMs: 10_000, sinkMs: 10_000 }, ...o });
    const h = r.host(1);
    const tms = [...r.cluster.placeOn(r.host(2), 1), ...r.cluster.placeOn(h, 1)].sort();
    r.flink!.runtime.parallelism = 4;
    r.flink!.runtime.sync();
    return { r, h, tms };
  }

  it('an idle task manager of a running batch job that may still serve result partitions is not released before its deadline; once the job no longer needs it, it is', async () => {
    const { r, h, tms } = await batch();
    await seconds(r, 11); // the source stage is over: the sink holds one slot, the rest is idle but holds partitions
    await r.block(nodeItem(h, { action: EVACUATE, evacuationTimeout: 600 }));
    await seconds(r, 3);
    assert.deepEqual(r.proxy.releaseCalls, []);
    const st = r.item(h)?.evacuation;
    assert.equal(st?.waiting?.code, 'result-partitions');
    assert.match(st?.waiting?.detail ?? '', /may still read result partitions/);
    await seconds(r, 8); // the sink finished: the job no longer needs them
    assert.deepEqual(released(r), tms.filter((c) => r.cluster.container(c)?.host === h || !r.cluster.container(c)));
  });

  it('at the deadline a batch job\'s task managers go like any other', async () => {
    const { r, h } = await batch();
    await seconds(r, 11);
    await r.block(nodeItem(h, { action: EVACUATE, evacuationTimeout: 5 }));
    await seconds(r, 6);
    assert.equal(r.proxy.releaseCalls.length, 1);
  });
});
