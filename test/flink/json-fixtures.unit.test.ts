/**
 * The evacuation's Flink parsers (src/flink/json.ts) on the answers of real JobManagers, 1.20 and
 * 2.x, saved by test/real/flink-evacuation.test.ts (test/fixtures/flink/<version>/evacuation/):
 * real shapes without a JVM.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseCheckpointConfig, parseFlinkVersion, parseJobDetail, parseJobs, parseLatestCheckpoint, parseRestarts, parseTaskManagers, parseTriggerId, parseTriggeredCheckpoint, parseVertexTaskManagers } from '../../src/flink/json';
import { repoRoot } from '../support/paths';

const VERSIONS = ['1.20.5', '2.3.0'];

for (const version of VERSIONS) describe(`flink/json on Flink ${version}'s real answers`, () => {
  const read = (name: string): unknown => JSON.parse(fs.readFileSync(path.join(repoRoot, 'test', 'fixtures', 'flink', version, 'evacuation', name), 'utf8'));
  const ok = <T>(p: { ok: true; value: T } | { ok: false; error: string }): T => {
    assert.ok(p.ok, p.ok ? '' : p.error);
    return p.value;
  };
  const overview = ok(parseJobs(read('jobs-overview.json')));
  const stream = overview.find((j) => j.name === 'evac-stream')!;
  const batch = overview.find((j) => j.name === 'evac-batch')!;

  it('task managers with their slots; jobs with task counts by state', () => {
    const tms = ok(parseTaskManagers(read('taskmanagers.json')));
    assert.equal(tms.length, 4);
    assert.ok(tms.every((t) => t.slots === 2 && t.freeSlots <= t.slots));
    assert.equal(stream.state, 'RUNNING');
    assert.equal(stream.tasks.running, stream.tasks.total);
    assert.equal(batch.state, 'RUNNING');
    assert.ok(batch.tasks.finished > 0, 'the first stage is over');
  });

  it("a job's type and its vertices with their inputs (from the plan)", () => {
    assert.equal(ok(parseJobDetail(read('job-stream.json'), stream.jid)).type, 'STREAMING');
    const b = ok(parseJobDetail(read('job-batch.json'), batch.jid));
    assert.equal(b.type, 'BATCH');
    const source = b.vertices.find((v) => v.inputs.length === 0)!;
    const sink = b.vertices.find((v) => v.inputs.length > 0)!;
    assert.equal(source.status, 'FINISHED');
    assert.equal(sink.status, 'RUNNING');
    assert.deepEqual(sink.inputs, [source.id]);
    assert.equal(parseJobDetail(read('job-batch.json'), stream.jid).ok, false, "another job's details are refused");
  });

  it('checkpoint settings: an interval for the streaming job; the batch job answers 404 "not enabled"', () => {
    assert.deepEqual(ok(parseCheckpointConfig(read('checkpoints-config-stream.json'))), { intervalMs: 2000 });
    const body = read('checkpoints-config-batch.json') as { errors: string[] };
    assert.match(body.errors[0], /Checkpointing is not enabled for this job/);
  });

  it('the newest completed checkpoint, the restart count, a trigger and its answers', () => {
    assert.ok(ok(parseLatestCheckpoint(read('checkpoints-stream.json')))!.id >= 1);
    assert.equal(ok(parseRestarts(read('metrics-numRestarts.json'))), 0);
    assert.match(ok(parseTriggerId(read('checkpoint-trigger.json'))), /^[0-9a-f]{32}$/);
    const done = ok(parseTriggeredCheckpoint(read('checkpoint-trigger-completed.json')));
    assert.ok(done.status === 'COMPLETED' && done.checkpointId >= 1);
    const failed = ok(parseTriggeredCheckpoint(read('checkpoint-trigger-failed-batch.json')));
    assert.equal(failed.status, 'FAILED');
    assert.match(failed.status === 'FAILED' ? failed.error : '', /is not a streaming job/);
  });

  it("a vertex's task managers (those that hold a batch source's partitions)", () => {
    const tms = ok(parseVertexTaskManagers(read('vertex-taskmanagers-batch-source.json')));
    assert.ok(tms.length >= 1);
    assert.ok(tms.every((t) => t.taskManagerId !== '' && (t.statusCounts.FINISHED ?? 0) >= 1));
    const known = new Set(ok(parseTaskManagers(read('taskmanagers.json'))).map((t) => t.id));
    assert.ok(tms.every((t) => known.has(t.taskManagerId)));
  });

  it('wrong bodies are refused with the field named, never read as "nothing is busy"', () => {
    assert.match((parseTaskManagers({ taskmanagers: [{ id: 'x', slotsNumber: 1, freeSlots: 2 }] }) as { error: string }).error, /freeSlots/);
    assert.equal(parseTaskManagers('<html>').ok, false);
    assert.equal(parseJobs({ jobs: [{ jid: 'nope', state: 'RUNNING', tasks: {} }] }).ok, false);
    assert.equal(parseTriggeredCheckpoint({ status: { id: 'MAYBE' } }).ok, false);
    assert.equal(parseFlinkVersion({}), undefined);
  });
});
