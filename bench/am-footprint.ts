/**
 * The sidecar's idle resident memory in Flink's AM container, against a bare `node` process of the
 * same runtime in the same run (design: ≤ 1.5×). Both are started from the release tarball
 * (npm run dist) as the AM container starts them: the sidecar through scripts/launch-in-am.sh with
 * conf/blocklist-am.yaml (the ZooKeeper store, its default V8 flags), reading a simulated RM and
 * AMRM proxy; the bare process is `node/bin/node` waiting on a timer. YARN's physical-memory check
 * counts RSS, so RSS it is (VmRSS after the idle period).
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Row, SectionResult, emptyResult } from './lib/report';
import { benchDir } from './lib/limits';
import { sleep } from './lib/stats';
import { listeningUrl, writeYarnSite } from '../test/support/child-sidecar';
import { releaseTarball, unpackRelease } from '../test/support/release';
import { ZkCluster, zookeeperUnavailableReason } from '../test/support/zookeeper';
import { startSimulator } from '../src/sim/server';

export interface AmFootprintSizes {
  /** How long both processes idle before their RSS is read. */
  idleMs: number;
}

const GOAL = 1.5;
const SECTION = 'am-footprint';

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for process ${pid}`);
  return Number(m[1]) / 1024;
}

export async function benchAmFootprint(sizes: AmFootprintSizes): Promise<SectionResult> {
  const out = emptyResult();
  const why = zookeeperUnavailableReason();
  if (why) {
    out.skipped.push({ section: SECTION, figure: 'idle RSS in the AM profile', reason: why });
    return out;
  }
  const dir = benchDir('am-footprint');
  const { home } = unpackRelease(releaseTarball(), dir);
  const zk = await ZkCluster.start(1);
  const sim = await startSimulator({ port: 0, nodes: 20, containers: 10, tickMs: 0 });
  const children: ChildProcess[] = [];
  try {
    writeYarnSite(dir, sim.url);
    const env = {
      PATH: process.env.PATH,
      CONTAINER_ID: sim.cluster.currentAttempt.amContainerId,
      HADOOP_CONF_DIR: dir,
      BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_STORE_ZOOKEEPER_QUORUM: zk.connectString(),
      BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_AMRM_PROXY_ADDRESS: sim.url,
    };
    const sidecar = spawn(path.join(home, 'scripts', 'launch-in-am.sh'), [], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(sidecar);
    await listeningUrl(sidecar, 30_000);
    const bare = spawn(path.join(home, 'node', 'bin', 'node'), ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
    children.push(bare);
    await sleep(sizes.idleMs);
    const [s, b] = [rssMb(sidecar.pid!), rssMb(bare.pid!)];
    out.rows.push(row(s, b));
    out.notes.push(`am-footprint: idle ${sizes.idleMs} ms; sidecar ${s.toFixed(1)} MB (launch-in-am.sh defaults: ${launchDefaults(home)}), bare node ${b.toFixed(1)} MB, both ${fs.existsSync(path.join(home, 'build-info.json')) ? JSON.parse(fs.readFileSync(path.join(home, 'build-info.json'), 'utf8')).node : ''}`);
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await sim.close();
    await zk.stop();
  }
  return out;
}

function row(sidecarMb: number, bareMb: number): Row {
  const ratio = sidecarMb / bareMb;
  return { section: SECTION, figure: 'idle RSS of the sidecar in the AM profile (ZooKeeper store)', value: sidecarMb, unit: 'MB', limit: bareMb, limitUnit: 'MB', limitWhat: 'a bare node process of the same runtime', ratio, goal: `≤ ${GOAL}×`, met: ratio <= GOAL };
}

function launchDefaults(home: string): string {
  // The first default is the bundled runtime's (Node.js 24); the other is for older ones.
  return /default_node_options="([^"]*)"/.exec(fs.readFileSync(path.join(home, 'scripts', 'launch-in-am.sh'), 'utf8'))?.[1] ?? '?';
}
