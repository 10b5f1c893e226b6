/**
 * What the sidecar's composition root loads before it knows its store: neither store's driver (the
 * AM profile runs on ZooKeeper and should not carry SQLite's, nor the default profile ZooKeeper's):
 * every module loaded stays resident in Flink's AM container (docs/benchmarks.md, am-footprint).
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { repoRoot } from '../support/paths';

function loadedBy(file: string): string[] {
  const script = `require(${JSON.stringify(path.join(repoRoot, 'dist', 'src', file))}); process.stdout.write(JSON.stringify(Object.keys(require.cache)))`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as string[];
}

describe('deploy: the sidecar loads a store driver only in its mode', () => {
  it('the composition root loads neither better-sqlite3 nor the ZooKeeper client', () => {
    const loaded = loadedBy('sidecar/sidecar.js');
    const hits = loaded.filter((f) => /node_modules[\\/](better-sqlite3|node-zookeeper-client)[\\/]|store[\\/](sqlite|zookeeper)[\\/]/.test(f));
    assert.deepEqual(hits, []);
  });
});

describe('deploy: the sidecar does not load axios', () => {
  // axios loads http2, form-data and (its fetch adapter's probe) Node's web Request/Response at
  // require time: ~5 MB resident in the AM for nothing the sidecar's calls use (peer-http.ts).
  it('neither the composition root nor the YARN, proxy and Flink clients load it', () => {
    const files = ['sidecar/sidecar.js', 'sidecar/sync-factory.js', 'yarn/rm-client.js', 'yarn/amrm-client.js', 'flink/client.js', 'detect/sources/flink-rest.js'];
    for (const f of files) assert.deepEqual(loadedBy(f).filter((m) => /node_modules[\\/]axios[\\/]/.test(m)), [], f);
  });
});
