/**
 * The release tarball (npm run dist) as a NodeManager host gets it: unpacked, with no Node.js on
 * PATH, started the ways docs/deploy.md says — `bin/blocklist`, scripts/launch-in-am.sh with the
 * interceptor's hand-off, and deploy/flink/blocklist-start.sh wrapping Flink's command.
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listeningUrl, writeYarnSite } from '../support/child-sidecar';
import { repoRoot, tempDir } from '../support/paths';
import { pathWithoutNode, releaseTarball, Unpacked, unpackRelease } from '../support/release';
import { http } from '../support/sidecar';
import { until } from '../support/real-yarn';
import { RunningSimulator, startSimulator } from '../../src/sim/server';

const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  version: string;
  devDependencies: Record<string, string>;
  distribution: { runtimes: Record<string, { package: string; version: string }> };
};
const runtime = pkg.distribution.runtimes['linux-x64'];

describe('deploy: the release tarball', function () {
  this.timeout(30_000);
  let tarball: string;
  let release: Unpacked;
  let bare: NodeJS.ProcessEnv;
  let sim: RunningSimulator;

  before(async function () {
    this.timeout(600_000); // a fresh machine compiles better-sqlite3 for the bundled runtime once
    tarball = releaseTarball();
    release = unpackRelease(tarball);
    bare = { PATH: pathWithoutNode(), HOME: tempDir() };
    sim = await startSimulator({ port: 0, nodes: 6, containers: 6, tickMs: 0 });
  });
  after(() => sim?.close());

  it('has its checksum beside it and is named for the version and platform', () => {
    assert.equal(path.basename(tarball), `flink-yarn-blocklist-${pkg.version}-linux-x64.tar.gz`);
    const r = spawnSync('sha256sum', ['-c', `${path.basename(tarball)}.sha256`], { cwd: path.dirname(tarball), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
  });

  it('holds the layout docs/deploy.md names, production modules only', () => {
    for (const f of ['bin/blocklist', 'bin/blocklist.js', 'node/bin/node', 'dist/src/cli/main.js', 'console/index.html', 'conf/blocklist-am.yaml', 'scripts/launch-in-am.sh', 'deploy/flink/blocklist-start.sh', 'deploy/flink/config.yaml', 'build-info.json', 'node_modules/better-sqlite3/build/Release/better_sqlite3.node']) {
      assert.ok(fs.existsSync(path.join(release.home, f)), `${f} is in the tarball`);
    }
    for (const x of ['bin/blocklist', 'node/bin/node', 'scripts/launch-in-am.sh', 'deploy/flink/blocklist-start.sh']) {
      assert.ok(fs.statSync(path.join(release.home, x)).mode & 0o100, `${x} is executable`);
    }
    // A dev dependency a production one needs too (ajv: Fastify's validator) is shipped for that one.
    const prod = spawnSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: repoRoot, encoding: 'utf8' }).stdout.split('\n');
    const needed = new Set(prod.map((l) => path.relative(path.join(repoRoot, 'node_modules'), l)));
    assert.ok(needed.has('fastify'), 'npm ls lists the production tree');
    const dev = Object.keys(pkg.devDependencies).filter((d) => !needed.has(d) && fs.existsSync(path.join(release.home, 'node_modules', d)));
    assert.deepEqual(dev, [], 'no dev dependency is shipped');
    assert.ok(!fs.existsSync(path.join(release.home, 'dist', 'test')), 'no tests are shipped');
  });

  it('`blocklist version` runs on the bundled runtime with no node on PATH', () => {
    assert.equal(spawnSync('node', ['--version'], { env: bare }).error?.message.includes('ENOENT'), true, 'the test PATH has no node');
    const r = spawnSync(path.join(release.home, 'bin', 'blocklist'), ['version', '-o', 'json'], { env: bare, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const v = JSON.parse(r.stdout) as { product: string; node: string; bundled: boolean; runtimePackage: string; interceptor: string };
    assert.deepEqual([v.product, v.node, v.bundled, v.runtimePackage], [pkg.version, `v${runtime.version}`, true, `${runtime.package}@${runtime.version}`]);
    assert.match(v.interceptor, /^\d+\.\d+\.\d+/);
    const text = spawnSync(path.join(release.home, 'bin', 'blocklist'), ['version'], { env: bare, encoding: 'utf8' }).stdout;
    assert.match(text, new RegExp(`flink-yarn-blocklist ${pkg.version}[\\s\\S]*Node\\.js v${runtime.version} \\(bundled`));
  });

  it('launch-in-am.sh finds the hand-off, writes its address beside it, enforces a block and serves the console from the tarball', async () => {
    const dir = tempDir();
    writeYarnSite(dir, sim.url);
    const local = path.join(dir, 'local');
    fs.mkdirSync(local);
    fs.writeFileSync(path.join(local, 'secret'), 'not-checked-by-the-simulator\n');
    fs.writeFileSync(path.join(local, 'blocklist-amrm-proxy.json'), JSON.stringify({ address: sim.url.replace('http://', ''), secretFile: path.join(local, 'secret') }));
    const env = { ...bare, CONTAINER_ID: sim.cluster.currentAttempt.amContainerId, HADOOP_CONF_DIR: dir, LOCAL_DIRS: `/nonexistent,${local}`, BLOCKLIST_PROXY_WAIT: '2' };
    const flags = ['-Drest.port=0', `-Dcluster.resource-blocklist.store.type=sqlite`, `-Dcluster.resource-blocklist.store.sqlite.path=${path.join(dir, 'b.db')}`];
    const child = spawn(path.join(release.home, 'scripts', 'launch-in-am.sh'), flags, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const { url, output } = await listeningUrl(child, 20_000);
      assert.match(output(), /AMRM proxy 127\.0\.0\.1:\d+ \(hand-off /);
      const host = sim.cluster.nodes[1].host;
      assert.equal((await http(url, 'PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'release test' })).status, 201);
      await until('the block on the simulated AM blacklist', 5000, async () => (sim.cluster.clientBlacklistView().includes(host) ? true : undefined));
      const ui = await fetch(`${url}/ui/`);
      assert.equal(ui.status, 200);
      assert.match(ui.headers.get('content-type') ?? '', /text\/html/);
      assert.match(await ui.text(), /<script type="module"/);
      const record = JSON.parse(fs.readFileSync(path.join(local, 'blocklist-sidecar.json'), 'utf8')) as { url: string; application: string };
      assert.deepEqual([record.url, record.application], [url, sim.cluster.applicationId], 'the address beside the hand-off');
    } finally {
      child.kill('SIGTERM');
    }
  });

  describe('deploy/flink/blocklist-start.sh, the start-command wrapper', () => {
    const wrapper = () => path.join(release.home, 'deploy', 'flink', 'blocklist-start.sh');

    it("in a TaskManager's container only execs Flink's command: same process, same exit status, no sidecar", () => {
      const logs = tempDir();
      const r = spawnSync('bash', [wrapper(), 'bash', '-c', 'echo "pid $$ args $0"; exit 7', 'org.apache.flink.yarn.YarnTaskExecutorRunner'], { env: { ...bare, LOG_DIRS: logs }, encoding: 'utf8' });
      assert.equal(r.status, 7);
      assert.match(r.stdout, /^pid \d+ args org\.apache\.flink\.yarn\.YarnTaskExecutorRunner\n$/);
      assert.deepEqual(fs.readdirSync(logs), []);
    });

    it("in the JobManager's container starts the sidecar beside Flink's process, which ends with it", async () => {
      const logs = tempDir();
      const dir = tempDir();
      writeYarnSite(dir, sim.url);
      const env = {
        ...bare,
        LOG_DIRS: `${logs},/nonexistent`,
        HADOOP_CONF_DIR: dir,
        CONTAINER_ID: sim.cluster.currentAttempt.amContainerId,
        BLOCKLIST_REST_PORT: '0',
        BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_STORE_TYPE: 'sqlite',
        BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_STORE_SQLITE_PATH: path.join(dir, 'b.db'),
        BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_AMRM_PROXY_ADDRESS: sim.url,
      };
      // Flink's JobManager stands in as a shell that runs until killed, its class name as $0.
      const jm = spawn('bash', [wrapper(), 'bash', '-c', 'echo "jm $$"; exec sleep 60', 'org.apache.flink.yarn.entrypoint.YarnSessionClusterEntrypoint'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      const sidecarLog = path.join(logs, 'blocklist-sidecar.log');
      try {
        const url = await until('the sidecar listening', 20_000, async () => /listening on (http:\/\/[\d.:]+)/.exec(readOr(sidecarLog))?.[1]);
        assert.equal((await http(url, 'GET', '/healthz')).status, 200);
        assert.equal((await http(url, 'PUT', `/blocklist/nodes/${sim.cluster.nodes[2].host}`, { action: 'MARK_BLOCKED', cause: 'wrapper test' })).status, 201);
        assert.match(readOr(path.join(logs, 'blocklist-audit.jsonl')), /wrapper test/, 'the audit trail is in the container log folder');
        jm.kill('SIGKILL');
        await until('the sidecar gone with its JobManager', 10_000, async () => (/is gone, shutting down/.test(readOr(sidecarLog)) && (await fetch(`${url}/healthz`).then(() => false, () => true)) ? true : undefined));
      } finally {
        jm.kill('SIGKILL');
      }
    });
  });
});

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
