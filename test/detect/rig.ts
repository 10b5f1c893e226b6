/**
 * What the suites of the detector beside an operator, an HA pair or a second job start in their
 * before() hooks, started one way: the simulator of a job (10 nodes, 30 containers, Flink 1.19, no
 * tick: the test drives it), enforcing sidecars beside it on an SQLite file or on a real ZooKeeper
 * store, and the one close() of their after() hooks.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { silentLogger } from '../../src/core/logger';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { tempDir } from '../support/paths';
import { pollUntil } from '../support/wait';
import { ZkCluster, zkJobConfig } from '../support/zookeeper';
import { enforcingSidecar } from './support';

export class DetectorRig {
  private readonly sims: RunningSimulator[] = [];
  private readonly sidecars: Sidecar[] = [];
  private readonly dirs: string[] = [];
  private zk: ZkCluster | undefined;

  /** One job's simulated YARN and Flink; `appNumber` tells two jobs apart. */
  async simulator(opts: { seed: number; appNumber?: number }): Promise<RunningSimulator> {
    const sim = await startSimulator({ port: 0, nodes: 10, containers: 30, tickMs: 0, flinkVersion: '1.19', ...opts });
    this.sims.push(sim);
    return sim;
  }

  /** An enforcing sidecar beside `sim` on an SQLite file of its own (support.ts enforcingSidecar). */
  async sqliteSidecar(sim: RunningSimulator): Promise<Sidecar> {
    const dir = tempDir();
    this.dirs.push(dir);
    return this.keep(await enforcingSidecar(sim, path.join(dir, 'blocklist.db')));
  }

  /** A one-server ZooKeeper for the sidecars of zkSidecar (the caller checks requireZookeeper first). */
  async zookeeper(): Promise<ZkCluster> {
    this.zk = await ZkCluster.start(1);
    return this.zk;
  }

  /**
   * An enforcing sidecar beside `sim` on the rig's ZooKeeper under `root`; resolves once it has
   * synced and its detector's first pass is done.
   */
  async zkSidecar(sim: RunningSimulator, root: string): Promise<Sidecar> {
    if (!this.zk) throw new Error('DetectorRig.zookeeper() first');
    const config = zkJobConfig(this.zk.connectString(), root, sim, {
      'cluster.resource-blocklist.store.zookeeper.operation-timeout': '3 s',
      'cluster.resource-blocklist.poll-interval': '200 ms',
      'cluster.resource-blocklist.detector.mode': 'enforce',
      'cluster.resource-blocklist.detector.flink.rest-address': sim.url,
      // Passes are driven by the test; the timer only makes the first.
      'cluster.resource-blocklist.detector.poll-interval': '1 h',
    });
    const s = this.keep(await startSidecar({ config, logger: silentLogger, env: {} }));
    await pollUntil('first sync', () => s.sync.synced(), 10_000, 20);
    await s.detector!.pass();
    return s;
  }

  /**
   * Closes what was started, sidecars first, then simulators, ZooKeeper and the files; every close
   * is tried, and the first failure is thrown after them.
   */
  async close(): Promise<void> {
    const failures: unknown[] = [];
    const attempt = async (close: () => Promise<void>): Promise<void> => {
      try {
        await close();
      } catch (e) {
        failures.push(e);
      }
    };
    for (const s of this.sidecars.splice(0)) await attempt(() => s.close());
    for (const s of this.sims.splice(0)) await attempt(() => s.close());
    const zk = this.zk;
    this.zk = undefined;
    if (zk) await attempt(() => zk.stop());
    for (const dir of this.dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
    if (failures.length > 0) throw failures[0];
  }

  private keep(s: Sidecar): Sidecar {
    this.sidecars.push(s);
    return s;
  }
}
