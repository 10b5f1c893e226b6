/**
 * Mocha reporter: mocha's own spec output, then one closing line `N passed, N failed[, N skipped]`.
 * With CI=true a skipped (pending) test is a failure: a suite that silently skips in CI (say, no
 * ZooKeeper) must not pass as green. The counts are also written to $BLOCKLIST_TEST_STATS for
 * scripts/test.js, which owns the exit code and, when it runs lanes, the one closing line.
 */
import Mocha from 'mocha';
import * as fs from 'node:fs';

const { Spec } = Mocha.reporters;
const { EVENT_RUN_END, EVENT_TEST_PENDING } = Mocha.Runner.constants;

class ClosingLineReporter extends Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const skipped: string[] = [];
    runner.on(EVENT_TEST_PENDING, (t: Mocha.Test) => skipped.push(t.fullTitle()));
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats ?? { passes: 0, failures: 0, pending: 0 };
      const ci = process.env.CI === 'true';
      const failed = s.failures + (ci ? s.pending : 0);
      if (ci && skipped.length) {
        process.stdout.write(`\nCI=true: ${skipped.length} skipped test(s) count as failed:\n${skipped.map((x) => `  - ${x}`).join('\n')}\n`);
      }
      const file = process.env.BLOCKLIST_TEST_STATS;
      if (file) fs.writeFileSync(file, JSON.stringify({ passes: s.passes, failures: failed, pending: s.pending }));
      // Under scripts/test.js (a lane) the script prints the one closing line for all lanes.
      if (process.env.BLOCKLIST_TEST_LANE) return;
      // Spec registered its epilogue on this event first (in super()), so this line comes last.
      process.stdout.write(`\n${s.passes} passed, ${failed} failed${!ci && s.pending ? `, ${s.pending} skipped` : ''}\n`);
    });
  }
}

export = ClosingLineReporter;
