/**
 * A real Flink JobManager's REST answers (Flink MiniCluster, test/support/real-flink.ts) read through
 * a small parser of the two endpoints the detector uses: /jobs/overview and /jobs/{id}/exceptions.
 * The answers are kept as fixtures (test/fixtures/flink/<version>/), refreshed with
 * BLOCKLIST_SAVE_REAL_FIXTURES=1, so parsers can be tested against real shapes without a JVM.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseExceptions as detectorExceptions, parseJobsOverview as detectorOverview } from '../../src/detect/flink-json';
import { repoRoot } from '../support/paths';
import { FLINK_LAUNCHERS, FlinkLine, RealFlink, realFlink, requireRealFlink } from '../support/real-flink';

interface JobSummary {
  jid: string;
  name: string;
  state: string;
}

/** One task failure: which task manager (Flink on YARN: the container id) and where it ran. */
interface TaskFailure {
  exceptionName: string;
  timestamp: number;
  taskName: string;
  taskManagerId: string;
  /** host:port of the task manager (`endpoint`; Flink 1.x also sends it as the deprecated `location`). */
  endpoint: string;
}

function obj(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${what} is not an object`);
  return v as Record<string, unknown>;
}

function parseOverview(body: unknown): JobSummary[] {
  const jobs = obj(body, 'overview').jobs;
  if (!Array.isArray(jobs)) throw new Error('overview.jobs is not a list');
  return jobs.map((j, i) => {
    const o = obj(j, `jobs[${i}]`);
    if (typeof o.jid !== 'string' || typeof o.name !== 'string' || typeof o.state !== 'string') throw new Error(`jobs[${i}] lacks jid/name/state`);
    return { jid: o.jid, name: o.name, state: o.state };
  });
}

/** Every task failure of the history, the root entries and their concurrent ones; global failures (no task manager) are left out. */
function parseExceptions(body: unknown): TaskFailure[] {
  const hist = obj(obj(body, 'exceptions').exceptionHistory, 'exceptionHistory');
  if (!Array.isArray(hist.entries)) throw new Error('exceptionHistory.entries is not a list');
  const out: TaskFailure[] = [];
  const take = (e: Record<string, unknown>): void => {
    const where = typeof e.endpoint === 'string' ? e.endpoint : typeof e.location === 'string' ? e.location : undefined;
    if (typeof e.taskManagerId !== 'string' || where === undefined) return;
    out.push({ exceptionName: String(e.exceptionName), timestamp: Number(e.timestamp), taskName: String(e.taskName), taskManagerId: e.taskManagerId, endpoint: where });
  };
  for (const raw of hist.entries) {
    const e = obj(raw, 'entry');
    take(e);
    if (Array.isArray(e.concurrentExceptions)) for (const c of e.concurrentExceptions) take(obj(c, 'concurrent exception'));
  }
  return out;
}

for (const line of Object.keys(FLINK_LAUNCHERS) as FlinkLine[]) describe(`real Flink ${line}: a JobManager REST endpoint with jobs that fail on purpose`, function () {
  this.timeout(60_000);
  let f: RealFlink;
  const get = async (p: string): Promise<unknown> => {
    const res = await fetch(f.rest + p);
    assert.equal(res.status, 200, p);
    return res.json();
  };

  before(async function () {
    this.timeout(180_000);
    requireRealFlink(this, line);
    f = await realFlink(line);
    if (process.env.BLOCKLIST_SAVE_REAL_FIXTURES === '1') {
      const dir = path.join(repoRoot, 'test', 'fixtures', 'flink', f.flinkVersion);
      fs.mkdirSync(dir, { recursive: true });
      const save = async (name: string, p: string): Promise<void> => fs.writeFileSync(path.join(dir, name), JSON.stringify(await get(p), null, 2) + '\n');
      await save('jobs-overview.json', '/jobs/overview');
      await save('exceptions-doomed.json', `/jobs/${f.jobs.doomed}/exceptions`);
      await save('exceptions-flaky.json', `/jobs/${f.jobs.flaky}/exceptions`);
      await save('taskmanagers.json', '/taskmanagers');
    }
  });

  it('/jobs/overview: the doomed job FAILED, the flaky one RUNNING again', async () => {
    const jobs = parseOverview(await get('/jobs/overview'));
    assert.deepEqual(jobs.find((j) => j.jid === f.jobs.doomed), { jid: f.jobs.doomed, name: 'doomed', state: 'FAILED' });
    assert.deepEqual(jobs.find((j) => j.jid === f.jobs.flaky), { jid: f.jobs.flaky, name: 'flaky', state: 'RUNNING' });
  });

  it('/jobs/{id}/exceptions: each failure names the task manager it ran on, and only the chosen ones failed', async () => {
    const tms = (obj(await get('/taskmanagers'), 'taskmanagers').taskmanagers as { id: string }[]).map((t) => t.id);
    assert.equal(tms.length, 3);
    const doomed = parseExceptions(await get(`/jobs/${f.jobs.doomed}/exceptions`));
    assert.ok(doomed.length >= 2, JSON.stringify(doomed));
    assert.ok(doomed.every((d) => d.exceptionName === 'java.lang.IllegalStateException' && tms.includes(d.taskManagerId) && /:\d+$/.test(d.endpoint)));
    // Subtasks 1/3 and 3/3 (indices 0 and 2) failed, on two distinct task managers; subtask 2/3 never did.
    const bySubtask = new Map(doomed.map((d) => [/\((\d)\/3\)/.exec(d.taskName)?.[1], d.taskManagerId]));
    assert.deepEqual([...bySubtask.keys()].sort(), ['1', '3']);
    assert.notEqual(bySubtask.get('1'), bySubtask.get('3'));
    const flaky = parseExceptions(await get(`/jobs/${f.jobs.flaky}/exceptions`));
    assert.equal(flaky.length, 2, 'subtask 1 failed in its first two attempts, then recovered');
    assert.ok(flaky.every((d) => /\(2\/3\)/.test(d.taskName)));
    assert.equal(new Set(flaky.map((d) => d.taskManagerId)).size, 1);
  });

  it("the detector's Flink parser (src/detect/flink-json.ts) reads the live answers: jobs, task failures with their task manager and host, the global failure as global", async () => {
    const jobs = detectorOverview(await get('/jobs/overview'));
    assert.ok(jobs.ok, jobs.ok ? '' : jobs.error);
    assert.deepEqual(jobs.value.map((j) => j.name).sort(), ['doomed', 'flaky']);
    const doomed = detectorExceptions(await get(`/jobs/${f.jobs.doomed}/exceptions`));
    assert.ok(doomed.ok, doomed.ok ? '' : doomed.error);
    const [newest] = doomed.value.entries;
    assert.equal(newest.global, true, 'the newest entry is the restart strategy giving up (no task)');
    assert.match(newest.message, /Recovery is suppressed/);
    const tasks = doomed.value.entries.flatMap((e) => [e, ...e.concurrent]).filter((e) => e.taskManagerId !== undefined);
    assert.ok(tasks.length >= 2);
    assert.ok(tasks.every((t) => t.host === 'localhost' && t.exceptionName === 'java.lang.IllegalStateException' && /fails on purpose/.test(t.message)));
  });

  it('the saved fixtures parse with the same parser (real shapes, no JVM needed)', () => {
    const dir = path.join(repoRoot, 'test', 'fixtures', 'flink', f.flinkVersion);
    const overview = parseOverview(JSON.parse(fs.readFileSync(path.join(dir, 'jobs-overview.json'), 'utf8')));
    assert.deepEqual(overview.map((j) => j.state).sort(), ['FAILED', 'RUNNING']);
    const doomed = parseExceptions(JSON.parse(fs.readFileSync(path.join(dir, 'exceptions-doomed.json'), 'utf8')));
    assert.ok(doomed.length >= 2 && doomed.every((d) => d.taskManagerId !== '' && d.endpoint !== ''));
  });
});
