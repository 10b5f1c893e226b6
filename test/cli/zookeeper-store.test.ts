/**
 * `--store zookeeper:host:port[,host:port]/root`: the admin commands on the shared ZooKeeper store
 * without a sidecar, as child processes against the harness's real ZooKeeper. Digest credentials
 * come from the environment only.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ZkCluster, freePort, requireZookeeper } from '../support/zookeeper';
import { tempDir } from '../support/sidecar';
import { ZookeeperStore } from '../../src/store/zookeeper/zookeeper-store';
import { CliResult, expectCode, runCli } from './run';

const json = <T>(r: CliResult): T => JSON.parse(r.stdout) as T;

describe('cli: --store zookeeper: on a real ZooKeeper (child processes)', function () {
  this.timeout(60_000);
  let zk: ZkCluster | undefined;
  let store: ZookeeperStore | undefined;
  const root = `/cli${process.pid}`;
  const AUTH = 'ops:s3cret';

  before(async function () {
    requireZookeeper(this);
    zk = await ZkCluster.start(1);
    // What a sidecar of the cluster would open: the same root, digest ACLs for 'ops'.
    store = await ZookeeperStore.open({ quorum: zk.connectString(), root, sessionTimeoutMs: 5000, operationTimeoutMs: 3000, auth: AUTH });
  });
  after(async () => {
    await store?.close();
    await zk?.stop();
  });

  it('block, list, import and unblock through the shared store; the sidecar\'s store sees each change', async () => {
    const dir = tempDir('blocklist-cli-zk-');
    const spec = `zookeeper:${zk!.connectString()}${root}`;
    const env = { BLOCKLIST_ZOOKEEPER_AUTH: AUTH };
    const cli = (...args: string[]) => runCli(args, { env, cwd: dir, timeoutMs: 30_000 });

    expectCode(await cli('block', 'node1', '--cause', 'bad disk', '--store', spec), 0, 'block');
    assert.equal((await store!.get('node1'))?.cause, 'bad disk', 'written to the shared store');

    fs.writeFileSync(path.join(dir, 'ex.txt'), 'node2\nnode3\n');
    const [imp, blockEnv] = await Promise.all([
      cli('import', 'ex.txt', '--sync', '--store', spec),
      runCli(['block', 'node4', '--cause', 'from env'], { env: { ...env, BLOCKLIST_STORE: spec }, cwd: dir, timeoutMs: 30_000 }),
    ]);
    expectCode(imp, 0, 'import --sync');
    expectCode(blockEnv, 0, 'BLOCKLIST_STORE=zookeeper:…');
    const listed = json<Record<string, { source?: string }>>(expectCode(await cli('list', '-o', 'json', '--store', spec), 0, 'list'));
    assert.deepEqual(Object.keys(listed).sort(), ['node1', 'node2', 'node3', 'node4']);
    assert.equal(listed.node2.source, `exclude-file:${path.join(dir, 'ex.txt')}`);

    expectCode(await cli('unblock', 'node1', '--store', spec), 0, 'unblock');
    assert.equal(await store!.get('node1'), undefined);
  });

  it('credentials never on the command line; a wrong root form, missing credentials and an unreachable ensemble are clear errors', async () => {
    const dir = tempDir('blocklist-cli-zk-');
    const hostPort = zk!.connectString();
    const dead = await freePort();
    const [withCreds, badHost, noAuth, unreachable] = await Promise.all([
      runCli(['list', '--store', `zookeeper:ops:s3cret@${hostPort}${root}`], { cwd: dir }),
      runCli(['list', '--store', `zookeeper:nohost${root}`], { cwd: dir }),
      runCli(['block', 'node9', '--cause', 'x', '--store', `zookeeper:${hostPort}${root}`], { cwd: dir, timeoutMs: 30_000 }),
      runCli(['list', '--store', `zookeeper:127.0.0.1:${dead}${root}`], { cwd: dir, timeoutMs: 40_000 }),
    ]);
    assert.match(expectCode(withCreds, 2, 'credentials in the spec').stderr, /must not carry credentials.*BLOCKLIST_ZOOKEEPER_AUTH/);
    assert.match(expectCode(badHost, 2, 'no port').stderr, /'nohost' is not host:port/);
    assert.notEqual(noAuth.code, 0, 'a write without the digest credentials is refused');
    assert.match(noAuth.stderr, /BLOCKLIST_ZOOKEEPER_AUTH/);
    assert.equal(await store!.get('node9'), undefined);
    assert.match(expectCode(unreachable, 5, 'unreachable').stderr, /cannot open the store zookeeper:127\.0\.0\.1:\d+/);
  });
});
