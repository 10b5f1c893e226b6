/**
 * conf/blocklist-am.yaml, the AM profile, and deploy/flink/config.yaml, the Flink keys docs/deploy.md
 * shows: what the issue "Installable" found working against the user (a container-local SQLite
 * file, the AMRMProxy's RPC port as the proxy, a fixed REST port) stays gone, and the Flink snippet
 * names the tarball and the paths inside it that the release really has.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';
import { loadConfig } from '../../src/config/config';
import { repoRoot } from '../support/paths';
import { RELEASE_TOP } from '../support/release';

const profile = path.join(repoRoot, 'conf', 'blocklist-am.yaml');
const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };

describe('deploy: the AM profile and the Flink snippet', () => {
  it('the AM profile stores in ZooKeeper, takes any free port and leaves the proxy to the hand-off', () => {
    const v = loadConfig({ file: profile, env: {} }).values;
    assert.equal(v['cluster.resource-blocklist.store.type'], 'zookeeper');
    assert.equal(v['rest.port'], 0);
    assert.equal(v['rest.bind-address'], '127.0.0.1');
    assert.equal(v['cluster.resource-blocklist.amrm-proxy.address'], '', 'the address comes from the interceptor hand-off, not a guessed port');
    assert.equal(v['log.audit.file'], '', 'the wrapper puts the audit trail in the container log folder');
  });

  it('takes the quorum from the environment, as containerized.master.env.* sets it', () => {
    const v = loadConfig({ file: profile, env: { BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_STORE_ZOOKEEPER_QUORUM: 'zk1:2181,zk2:2181/prod' } }).values;
    assert.equal(v['cluster.resource-blocklist.store.zookeeper.quorum'], 'zk1:2181,zk2:2181/prod');
  });

  it('the Flink snippet ships this version\'s tarball and starts the wrapper inside it', () => {
    const snippet = YAML.parse(fs.readFileSync(path.join(repoRoot, 'deploy', 'flink', 'config.yaml'), 'utf8')) as Record<string, string>;
    const archive = `flink-yarn-blocklist-${pkg.version}-linux-x64.tar.gz`;
    assert.equal(path.basename(snippet['yarn.ship-archives']), archive);
    const template = snippet['yarn.container-start-command-template'].split(' ');
    assert.equal(template[0], 'bash');
    const [unpackedAs, top, ...inside] = template[1].split('/');
    assert.deepEqual([unpackedAs, top], [archive, RELEASE_TOP], 'YARN unpacks the archive into ./<file name>/');
    assert.ok(fs.existsSync(path.join(repoRoot, ...inside)), `${inside.join('/')} is in the repo and so in the tarball`);
    assert.deepEqual(template.slice(2), ['%java%', '%jvmmem%', '%jvmopts%', '%logging%', '%class%', '%args%', '%redirects%'], "Flink's own default template, unchanged behind the wrapper");
    assert.match(snippet['flink.yarn.resourcemanager.scheduler.address'], /^\$\{env\.NM_HOST\}:/);
    assert.equal(snippet['containerized.master.env.BLOCKLIST_AMRM_PROXY'], 'true');
  });

  it("launch-in-am.sh runs the sidecar jitless, and the sidecar's code needs nothing jitless lacks (WebAssembly: fetch, WebSocket)", () => {
    const script = fs.readFileSync(path.join(repoRoot, 'scripts', 'launch-in-am.sh'), 'utf8');
    assert.match(script, /-ge 24 \]; then\n\s*default_node_options="--jitless /, 'the bundled Node.js 24 runs the sidecar jitless');
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        // quickstart's demo runs on a developer's machine with Node's defaults, never in an AM.
        else if (p.endsWith('.ts') && !p.includes(`${path.sep}quickstart${path.sep}`)) {
          fs.readFileSync(p, 'utf8').split('\n').forEach((line, i) => {
            if (/(^|[^.\w])fetch\(|new WebSocket\(|new EventSource\(|WebAssembly\./.test(line.replace(/\/\/.*$/, ''))) offenders.push(`${path.relative(repoRoot, p)}:${i + 1}`);
          });
        }
      }
    };
    walk(path.join(repoRoot, 'src'));
    assert.deepEqual(offenders, [], 'these need WebAssembly, which --jitless turns off');
  });
});
