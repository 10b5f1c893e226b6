/**
 * src/ files stay one concern each (#33): none over 400 lines. A file that grows past it is split
 * by concern (as controller.ts became pass-observe / pass-flink / pass-shown), not trimmed.
 */
import { strict as assert } from 'node:assert';
import { readSource, sourceFiles } from './source-ast';

const MAX_LINES = 400;

/** Lines as an editor counts them (a final newline ends the last one, it starts none). */
export function lineCount(source: string): number {
  if (source === '') return 0;
  return source.split('\n').length - (source.endsWith('\n') ? 1 : 0);
}

describe(`code: no file of src/ over ${MAX_LINES} lines (#33)`, () => {
  it('counts lines as written (the check can fail)', () => {
    assert.equal(lineCount(''), 0);
    assert.equal(lineCount('a\n'), 1);
    assert.equal(lineCount('a\nb'), 2);
    assert.equal(lineCount('x\n'.repeat(MAX_LINES + 1)) > MAX_LINES, true);
  });

  it(`every .ts file of src/ has at most ${MAX_LINES} lines`, () => {
    const files = sourceFiles('src');
    assert.ok(files.length > 200, `the files were found (${files.length})`);
    const over = files.map((f) => ({ f, n: lineCount(readSource(f)) })).filter((x) => x.n > MAX_LINES).map((x) => `${x.f}: ${x.n} lines`);
    assert.deepEqual(over, []);
  });
});
