/**
 * What evacuations read from Flink, against real JobManagers of both lines (am-proxy's
 * EvacuationLauncher: a Flink MiniCluster with a checkpointed streaming job and a batch job whose
 * second stage reads the first one's partitions): the client (src/flink/client.ts) and the watcher
 * (src/sync/watch-flink.ts) on the live answers, a checkpoint triggered through the REST API, and a
 * released task manager failing the job over. The answers are kept as fixtures
 * (test/fixtures/flink/<version>/evacuation/), refreshed with BLOCKLIST_SAVE_REAL_FIXTURES=1, so the
 * parsers are also tested on real shapes without a JVM (test/flink/json-fixtures.unit.test.ts).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FlinkRestClient } from '../../src/flink/client';
import { FlinkWatcher } from '../../src/sync/watch-flink';
import { silentLogger } from '../../src/core/logger';
import { ResourceManagerReader } from '../../src/yarn/types';
import { repoRoot } from '../support/paths';
import { FLINK_LAUNCHERS, FlinkLine, requireRealFlink } from '../support/real-flink';
import { EvacuationFlink, startEvacuationFlink } from '../support/real-flink-evacuation';
import { pollUntil } from '../support/wait';

/** Polls `cond` every 200 ms (a JobManager is not asked in a busy loop). */
const until = (cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<number> => pollUntil(what, cond, timeoutMs, 200);

const noRm = {} as ResourceManagerReader;

for (const line of Object.keys(FLINK_LAUNCHERS) as FlinkLine[]) describe(`real Flink ${line}: what an evacuation reads and asks of a JobManager`, function () {
  this.timeout(60_000);
  let f: EvacuationFlink;
  let client: FlinkRestClient;
  let sourceVertex = '';
  const get = async (p: string): Promise<{ status: number; body: unknown }> => {
    const res = await fetch(f.rest + p);
    return { status: res.status, body: await res.json() };
  };

  before(async function () {
    this.timeout(240_000);
    requireRealFlink(this, line);
    f = await startEvacuationFlink(line, { tms: 4, slots: 2, intervalMs: 2000, batch: true });
    client = new FlinkRestClient({ baseUrl: f.rest, canPost: true });
    // The batch job's first stage done, its second one reading the partitions it wrote.
    await until(async () => {
      const d = await client.job(f.batch!);
      sourceVertex = d.vertices.find((v) => v.inputs.length === 0)?.id ?? '';
      return d.vertices.some((v) => v.inputs.length === 0 && v.status === 'FINISHED') && d.vertices.some((v) => v.status === 'RUNNING');
    }, 90_000, 'the batch job reaching its second stage');
    await until(async () => (await client.latestCheckpoint(f.stream)) !== undefined, 30_000, 'a first checkpoint');
    if (process.env.BLOCKLIST_SAVE_REAL_FIXTURES === '1') await saveFixtures();
  });

  after(async () => {
    await f?.stop();
  });

  async function saveFixtures(): Promise<void> {
    const dir = path.join(repoRoot, 'test', 'fixtures', 'flink', f.flinkVersion, 'evacuation');
    fs.mkdirSync(dir, { recursive: true });
    const save = (name: string, body: unknown): void => fs.writeFileSync(path.join(dir, name), JSON.stringify(body, null, 2) + '\n');
    for (const [name, p] of [
      ['taskmanagers.json', '/taskmanagers'],
      ['jobs-overview.json', '/jobs/overview'],
      ['job-stream.json', `/jobs/${f.stream}`],
      ['job-batch.json', `/jobs/${f.batch}`],
      ['checkpoints-config-stream.json', `/jobs/${f.stream}/checkpoints/config`],
      ['checkpoints-config-batch.json', `/jobs/${f.batch}/checkpoints/config`],
      ['checkpoints-stream.json', `/jobs/${f.stream}/checkpoints`],
      ['metrics-numRestarts.json', `/jobs/${f.stream}/metrics?get=numRestarts`],
      ['vertex-taskmanagers-batch-source.json', `/jobs/${f.batch}/vertices/${sourceVertex}/taskmanagers`],
    ]) save(name, (await get(p)).body);
    const trigger = async (jid: string): Promise<{ posted: unknown; status: unknown }> => {
      const posted = (await (await fetch(`${f.rest}/jobs/${jid}/checkpoints`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as { 'request-id': string };
      let status: unknown;
      await until(async () => {
        status = (await get(`/jobs/${jid}/checkpoints/${posted['request-id']}`)).body;
        return (status as { status: { id: string } }).status.id === 'COMPLETED';
      }, 20_000, 'the trigger to answer');
      return { posted, status };
    };
    const s = await trigger(f.stream);
    save('checkpoint-trigger.json', s.posted);
    save('checkpoint-trigger-completed.json', s.status);
    save('checkpoint-trigger-failed-batch.json', (await trigger(f.batch!)).status);
  }

  it('the client reads slots, jobs with their type, checkpoint settings, the newest checkpoint and the restarts', async () => {
    assert.match((await client.version()) ?? '', line === '2.x' ? /^2\./ : /^1\.20\./);
    const tms = await client.taskManagers();
    assert.equal(tms.length, 4);
    assert.ok(tms.every((t) => t.slots === 2 && t.freeSlots >= 0 && t.freeSlots <= 2));
    assert.equal(tms.reduce((n, t) => n + t.slots - t.freeSlots, 0) >= 3, true, 'the stream job holds 3 slots');
    const jobs = await client.jobs();
    assert.deepEqual(jobs.map((j) => j.state).sort(), ['RUNNING', 'RUNNING']);
    const stream = jobs.find((j) => j.jid === f.stream)!;
    assert.equal(stream.tasks.running, stream.tasks.total);
    assert.equal((await client.job(f.stream)).type, 'STREAMING');
    assert.equal((await client.job(f.batch!)).type, 'BATCH');
    assert.deepEqual(await client.checkpointConfig(f.stream), { intervalMs: 2000 });
    assert.deepEqual(await client.checkpointConfig(f.batch!), {}, 'a batch job has no checkpointing: 404 "not enabled" is none');
    assert.ok(((await client.latestCheckpoint(f.stream))?.id ?? 0) >= 1);
    assert.equal(await client.restarts(f.stream), 0);
  });

  it('a checkpoint triggered through the REST API completes; one of a batch job fails, and says why', async () => {
    const id = await client.triggerCheckpoint(f.stream);
    let r = await client.triggeredCheckpoint(f.stream, id);
    await until(async () => (r = await client.triggeredCheckpoint(f.stream, id)).status !== 'IN_PROGRESS', 20_000, 'the checkpoint');
    assert.equal(r.status, 'COMPLETED');
    assert.ok(r.status === 'COMPLETED' && r.checkpointId >= 1);
    const b = await client.triggerCheckpoint(f.batch!);
    let rb = await client.triggeredCheckpoint(f.batch!, b);
    await until(async () => (rb = await client.triggeredCheckpoint(f.batch!, b)).status !== 'IN_PROGRESS', 20_000, 'the batch trigger');
    assert.equal(rb.status, 'FAILED');
    assert.match(rb.status === 'FAILED' ? rb.error : '', /not a streaming job/);
  });

  it("the watcher sees the batch job's source task managers as holding partitions the running sink still reads", async () => {
    const watcher = new FlinkWatcher({ rm: noRm, logger: silentLogger, connect: () => client, address: f.rest, enabled: true, minIntervalMs: 1000 });
    const tms = await client.taskManagers();
    await watcher.refresh(0, undefined, { evacuating: true, covered: new Set(tms.map((t) => t.id)), triggers: [] });
    const k = watcher.knowledge;
    assert.equal(k.kind, 'known');
    const view = k.kind === 'known' ? k.view : undefined;
    const batch = view?.jobs.find((j) => j.jid === f.batch);
    const source = (await client.vertexTaskManagers(f.batch!, sourceVertex)).map((t) => t.taskManagerId).sort();
    assert.ok(source.length >= 1);
    if ([...tms].some((t) => t.freeSlots === t.slots)) assert.deepEqual([...(batch?.pinned ?? [])].sort(), source);
    assert.equal(view?.jobs.find((j) => j.jid === f.stream)?.checkpointIntervalMs, 2000);
    assert.equal(view?.canTrigger, true);
  });

  it('a released task manager leaves Flink and fails the job over (numRestarts moves, with the metric fetcher’s delay); the job runs again on the replacement', async function () {
    this.timeout(150_000);
    // One that runs a task of the streaming job: a task manager holding only the batch job's tasks
    // fails that job over, and the streaming job's count rightly stays where it was.
    const streamTms = new Set<string>();
    for (const v of (await client.job(f.stream)).vertices) for (const t of await client.vertexTaskManagers(f.stream, v.id)) streamTms.add(t.taskManagerId);
    const busy = (await client.taskManagers()).find((t) => streamTms.has(t.id));
    assert.ok(busy, `a task manager runs the streaming job (its vertices name ${[...streamTms].join(', ') || 'none'})`);
    await f.send(`release ${busy.id}`, 'released');
    await until(async () => !(await client.taskManagers()).some((t) => t.id === busy.id), 20_000, 'Flink to let it go');
    // The count reaches the REST API through Flink's metric fetcher (metrics.fetcher.update-interval), after the failover.
    await until(async () => ((await client.restarts(f.stream)) ?? 0) >= 1, 40_000, 'the failover to be counted');
    await f.next('started', 20_000);
    await until(async () => {
      const s = (await client.jobs()).find((j) => j.jid === f.stream);
      return s?.state === 'RUNNING' && s.tasks.running === s.tasks.total;
    }, 40_000, 'the job running every task again');
  });
});
