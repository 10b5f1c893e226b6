/**
 * Which Node.js the product names, and that every place says the same: it runs on 20, 22 and 24
 * (engines), the release tarball bundles 24, the Docker image is 22 or later, the types it compiles
 * against are 22 or later (Node 20 has been end-of-life since April 2026), and README says so.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../support/paths';

interface Pkg {
  engines: { node: string };
  devDependencies: Record<string, string>;
  distribution: { runtimes: Record<string, { version: string }> };
}
const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as Pkg;
const major = (range: string): number => Number(/(\d+)/.exec(range)?.[1]);

describe('deploy: the Node.js versions the product names', () => {
  it('compiles against @types/node 22 or later, the oldest line still supported upstream', () => {
    assert.ok(major(pkg.devDependencies['@types/node']) >= 22, `@types/node ${pkg.devDependencies['@types/node']}`);
  });

  it('the tarball bundles Node.js 24 and the Docker image runs 22 or later', () => {
    assert.equal(major(pkg.distribution.runtimes['linux-x64'].version), 24);
    const froms = [...fs.readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8').matchAll(/^FROM node:(\d+)/gm)].map((m) => Number(m[1]));
    assert.ok(froms.length > 0 && froms.every((n) => n >= 22), `Dockerfile FROM node:${froms.join(', node:')}`);
  });

  it('README names the runtimes it runs on (engines) and the bundled one', () => {
    assert.equal(pkg.engines.node, '>=20');
    const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    const line = /^On a machine with Node\.js ([^\n]*)$/m.exec(readme)?.[1] ?? '';
    for (const v of ['20', '22', '24']) assert.match(line, new RegExp(`\\b${v}\\b`), `README's Node.js line names ${v}: "${line}"`);
    assert.match(line, /tarball bundles (Node\.js )?24/, `README's Node.js line says what the release bundles: "${line}"`);
  });
});
