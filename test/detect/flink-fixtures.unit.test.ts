/**
 * The detector's Flink parser on answers of real Flink JobManagers (test/fixtures/flink/<version>/,
 * recorded from Flink MiniClusters by test/real/flink-rest.test.ts): a job that fails in one subtask
 * now and then ("flaky") and one whose every subtask fails until Flink gives up ("doomed").
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseExceptions, parseJobsOverview } from '../../src/detect/flink-json';
import { attributeEntry } from '../../src/detect/sources/flink-rest';
import { DEFAULT_DECIDE_SETTINGS, decide } from '../../src/detect/decide';
import { ingest } from '../../src/detect/incidents';
import { emptyState } from '../../src/detect/state';
import { Failure } from '../../src/detect/types';
import { repoRoot } from '../support/paths';

const dir = path.join(repoRoot, 'test', 'fixtures', 'flink');
const versions = fs.existsSync(dir) ? fs.readdirSync(dir).filter((v) => fs.statSync(path.join(dir, v)).isDirectory()).sort() : [];
const read = (v: string, f: string): unknown => JSON.parse(fs.readFileSync(path.join(dir, v, f), 'utf8'));

describe('detect/flink-json on real Flink answers (test/fixtures/flink)', () => {
  it('the fixtures are there (recorded by the real-Flink suite)', () => {
    assert.ok(versions.length >= 1, `no version folder in ${dir}`);
  });

  for (const v of versions) {
    describe(`Flink ${v}`, () => {
      it('jobs overview: ids, names, states and last-modification', () => {
        const r = parseJobsOverview(read(v, 'jobs-overview.json'));
        assert.ok(r.ok, r.ok ? '' : r.error);
        assert.deepEqual(r.value.map((j) => [j.name, j.state]).sort(), [['doomed', 'FAILED'], ['flaky', 'RUNNING']]);
        assert.ok(r.value.every((j) => /^[0-9a-f]{32}$/.test(j.jid) && j.lastModification > 1_600_000_000_000));
      });

      it('exceptions: every local failure is attributed through its task manager; the global "Recovery is suppressed" root is not, its concurrent task failures are', () => {
        for (const name of ['exceptions-flaky.json', 'exceptions-doomed.json']) {
          const r = parseExceptions(read(v, name));
          assert.ok(r.ok, r.ok ? '' : r.error);
          assert.ok(r.value.entries.length > 0);
          for (const e of r.value.entries) {
            if (e.global) {
              assert.equal(e.exceptionName, 'org.apache.flink.runtime.JobException');
              assert.match(e.message, /^org\.apache\.flink\.runtime\.JobException: Recovery is suppressed/);
              assert.ok(e.concurrent.length > 0 && e.concurrent.every((c) => c.taskManagerId && c.host === 'localhost'));
            } else {
              assert.ok(e.taskManagerId, 'taskManagerId (Flink 1.17+)');
              assert.equal(e.host, 'localhost', 'the host of endpoint (1.19+) / location');
              assert.match(e.message, /^java\.lang\.IllegalStateException: blocklist test: \w+ fails on purpose in subtask \d, attempt \d$/);
            }
          }
        }
      });

      it('through the rules: the doomed job failed on several task managers with one exception — on distinct hosts that is the job\'s fault, not theirs', () => {
        const jobs = parseJobsOverview(read(v, 'jobs-overview.json'));
        assert.ok(jobs.ok);
        const doomed = jobs.value.find((j) => j.name === 'doomed')!;
        const ex = parseExceptions(read(v, 'exceptions-doomed.json'));
        assert.ok(ex.ok);
        // A MiniCluster's task managers share one host; on YARN each id is a container on its own node.
        const tmIds = [...new Set(ex.value.entries.flatMap((e) => [e, ...e.concurrent]).map((e) => e.taskManagerId).filter((x): x is string => !!x))].sort();
        const hostOf = new Map(tmIds.map((id, i) => [id, `node${i + 1}`]));
        const failures: Failure[] = [];
        let unattributed = 0;
        for (const e of ex.value.entries) {
          const r = attributeEntry(doomed.jid, e, { hostOfContainer: (id) => hostOf.get(id), isKnownHost: () => false });
          failures.push(...r.failures);
          unattributed += r.unattributed;
        }
        assert.equal(unattributed, 1, 'only the global root');
        assert.equal(new Set(failures.map((f) => f.signature)).size, 1, 'one exception, whatever the subtask');
        const st = emptyState();
        const now = Math.max(...failures.map((f) => f.at)) + 1000;
        // A task failure can show twice (its own entry, and again among the concurrent exceptions of
        // the final global failure, as Flink 1.20 does): one key, counted once.
        const unique = new Set(failures.map((f) => f.key)).size;
        const ing = ingest(st, failures, now, DEFAULT_DECIDE_SETTINGS.windowMs);
        assert.equal(ing.added.length, unique);
        assert.equal(ing.duplicates, failures.length - unique);
        const r = decide({ now, settings: { ...DEFAULT_DECIDE_SETTINGS, mode: 'enforce', jobFaultHosts: Math.min(3, hostOf.size) }, state: st, runningNodes: 100, blocked: new Map(), applicationId: 'application_1_0001' });
        assert.deepEqual(r.blocks, [], 'nobody is blamed for the job failing everywhere');
        if (hostOf.size >= 2) assert.equal(r.jobFaults.length, 1);
      });
    });
  }
});
