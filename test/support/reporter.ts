/**
 * Mocha reporter: mocha's own spec output, then one closing line `N passed, N failed[, N skipped]`.
 * With CI=true a skipped (pending) test is a failure: a suite that silently skips in CI (say, no
 * ZooKeeper) must not pass as green. The counts are also written to $BLOCKLIST_TEST_STATS for
 * scripts/test.js, which owns the exit code and, when it runs lanes, the one closing line, and
 * so is each file's wall time (its suites' hooks included) for the script's table of slow files.
 */
import Mocha from 'mocha';
import * as fs from 'node:fs';

const { Spec } = Mocha.reporters;
const { EVENT_RUN_END, EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_FAIL, EVENT_TEST_PASS, EVENT_TEST_PENDING } = Mocha.Runner.constants;

/** One test file's share of a run: the wall time of its top-level suites (hooks included) and its counts. */
interface FileTime {
  file: string;
  ms: number;
  tests: number;
}

/** Wall time per file, from its top-level suites' begin and end (mocha runs one file's suites together). */
function fileTimes(runner: Mocha.Runner): () => FileTime[] {
  const byFile = new Map<string, FileTime>();
  const begun = new Map<Mocha.Suite, number>();
  const entry = (file: string | undefined): FileTime | undefined => {
    if (!file) return undefined;
    let e = byFile.get(file);
    if (!e) byFile.set(file, (e = { file, ms: 0, tests: 0 }));
    return e;
  };
  const topLevel = (s: Mocha.Suite): boolean => s.parent?.root === true;
  runner.on(EVENT_SUITE_BEGIN, (s: Mocha.Suite) => {
    if (topLevel(s)) begun.set(s, performance.now());
  });
  runner.on(EVENT_SUITE_END, (s: Mocha.Suite) => {
    const t0 = begun.get(s);
    const e = entry(s.file);
    if (t0 !== undefined && e) e.ms += performance.now() - t0;
  });
  const count = (t: Mocha.Test): void => {
    const e = entry(t.file);
    if (e) e.tests++;
  };
  for (const ev of [EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING]) runner.on(ev, count);
  return () => [...byFile.values()].map((e) => ({ ...e, ms: Math.round(e.ms) }));
}

class ClosingLineReporter extends Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const skipped: string[] = [];
    const files = fileTimes(runner);
    runner.on(EVENT_TEST_PENDING, (t: Mocha.Test) => skipped.push(t.fullTitle()));
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats ?? { passes: 0, failures: 0, pending: 0 };
      const ci = process.env.CI === 'true';
      const failed = s.failures + (ci ? s.pending : 0);
      if (ci && skipped.length) {
        process.stdout.write(`\nCI=true: ${skipped.length} skipped test(s) count as failed:\n${skipped.map((x) => `  - ${x}`).join('\n')}\n`);
      }
      const file = process.env.BLOCKLIST_TEST_STATS;
      if (file) fs.writeFileSync(file, JSON.stringify({ passes: s.passes, failures: failed, pending: s.pending, files: files() }));
      // Under scripts/test.js (a lane) the script prints the one closing line for all lanes.
      if (process.env.BLOCKLIST_TEST_LANE) return;
      // Spec registered its epilogue on this event first (in super()), so this line comes last.
      process.stdout.write(`\n${s.passes} passed, ${failed} failed${!ci && s.pending ? `, ${s.pending} skipped` : ''}\n`);
    });
  }
}

export = ClosingLineReporter;
