/**
 * Keeps bench/ from rotting: runs every section of the benchmark harness with tiny sizes and checks
 * that each produces figures with a limit and a finite ratio. It asserts nothing about timings
 * (the published figures come from `npm run bench` on a quiet machine, docs/benchmarks.md).
 */
import { strict as assert } from 'node:assert';
import { SECTIONS, runBench, tinySizes } from '../../bench/suite';
import { markdownTable } from '../../bench/lib/report';

describe('bench harness (tiny sizes, no timing assertions)', function () {
  this.timeout(180_000);

  it('runs every section and reports each figure with its same-run limit and a ratio', async () => {
    const r = await runBench(SECTIONS, tinySizes());
    for (const section of SECTIONS) {
      assert.ok(r.rows.some((row) => row.section === section), `no figures from the ${section} section`);
    }
    for (const row of r.rows) {
      assert.ok(Number.isFinite(row.value) && row.value >= 0, `${row.figure}: value ${row.value}`);
      assert.ok(Number.isFinite(row.limit) && row.limit > 0, `${row.figure}: limit ${row.limit}`);
      assert.ok(Number.isFinite(row.ratio) && row.ratio >= 0, `${row.figure}: ratio ${row.ratio}`);
      assert.ok(row.goal.length > 0 && row.limitWhat.length > 0, `${row.figure}: goal and limit are named`);
    }
    const table = markdownTable(r.rows, r.skipped);
    assert.match(table, /\| section \| figure \| value \| limit \(same run\) \| ratio \| goal \| met \|/);
    assert.equal(table.split('\n').length, 2 + r.rows.length + r.skipped.length);
  });
});
