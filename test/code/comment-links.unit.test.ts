/**
 * Source comments say why; outside material is cited in docs/ (#33). This fails on a comment line
 * of src/ that links to a web address other than an example one (*.example, *.local, loopback).
 */
import { strict as assert } from 'node:assert';
import { readSource, sourceFiles } from './source-ast';

const COMMENT_LINE = /^\s*(\/\/|\/?\*)/;
const ADDRESS = /https?:\/\/([A-Za-z0-9.-]+\.[A-Za-z]{2,})/g;
const EXAMPLE_HOST = /(^|\.)(example|local|localhost)$|^127\.|^example\./;

export function outsideLinks(text: string): string[] {
  const out: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (!COMMENT_LINE.test(line)) return;
    for (const m of line.matchAll(ADDRESS)) if (!EXAMPLE_HOST.test(m[1])) out.push(`${i + 1}: ${m[0]}`);
  });
  return out;
}

describe('code: no links to outside material in source comments (#33)', () => {
  it('finds them (the check can fail)', () => {
    assert.deepEqual(outsideLinks(' * ZooKeeper (https://zookeeper.apache.org/doc/recipes.html)\nconst u = "https://x.org";\n// e.g. http://rm1.example:8088'), ['1: https://zookeeper.apache.org']);
  });

  it('src/ comments cite docs/, not the web', () => {
    const found = sourceFiles('src').flatMap((f) => outsideLinks(readSource(f)).map((l) => `${f}:${l}`));
    assert.deepEqual(found, []);
  });
});
