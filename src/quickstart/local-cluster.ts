/**
 * A whole local setup in one process: the YARN simulator and a sidecar wired to it over real HTTP
 * (the sidecar's RM and proxy clients point at the simulator's address). Used by `npm start`
 * (blocklist quickstart) and `npm run demo`.
 */
import { LoadedConfig, loadConfig } from '../config/config';
import { Logger, silentLogger } from '../core/logger';
import { RunningSimulator, startSimulator } from '../sim/server';
import { Sidecar, startSidecar } from '../sidecar/sidecar';

export interface LocalClusterOptions {
  restPort: number;
  simPort: number;
  sqlitePath: string;
  nodes: number;
  containers: number;
  tickMs: number;
  seed?: number;
  logger?: Logger;
  /** Extra -D style overrides. */
  define?: Record<string, string>;
  /** Runs the failure detector against the simulator's Flink and YARN faces in this mode. */
  detector?: 'shadow' | 'enforce';
}

/** A port the quickstart needs is taken; names which part wanted it and the flag that moves it. */
export class PortInUseError extends Error {
  constructor(
    readonly part: 'simulator' | 'sidecar',
    readonly port: number,
  ) {
    const flag = part === 'simulator' ? '--sim-port' : '--port';
    const who = part === 'simulator' ? 'the YARN simulator' : "the sidecar's REST API";
    super(`port ${port} (for ${who}) is already in use — is another quickstart or sidecar running? choose another with ${flag} N (0 = any free port)`);
  }
}

const inUse = (e: unknown): boolean => (e as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE';

export interface LocalCluster {
  sim: RunningSimulator;
  sidecar: Sidecar;
  close(): Promise<void>;
}

/**
 * The configuration of a sidecar on an SQLite file whose RM and AMRM proxy are a simulator at
 * `simUrl` (both faces share its port). Used by the quickstart, the demo and the benchmarks.
 */
export function sidecarConfigForSimulator(simUrl: string, sqlitePath: string, define: Record<string, string> = {}): LoadedConfig {
  return loadConfig({
    env: {},
    dynamic: {
      'cluster.resource-blocklist.store.type': 'sqlite',
      'cluster.resource-blocklist.store.sqlite.path': sqlitePath,
      'yarn.resourcemanager.webapp.address': simUrl.replace(/^http:\/\//, ''),
      'cluster.resource-blocklist.amrm-proxy.address': simUrl,
      ...define,
    },
  });
}

export async function startLocalCluster(o: LocalClusterOptions): Promise<LocalCluster> {
  const sim = await startSimulator({ port: o.simPort, nodes: o.nodes, containers: o.containers, tickMs: o.tickMs, seed: o.seed ?? 7 }).catch((e: unknown) => {
    throw inUse(e) ? new PortInUseError('simulator', o.simPort) : e;
  });
  try {
    const config = sidecarConfigForSimulator(sim.url, o.sqlitePath, {
      'rest.port': String(o.restPort),
      'cluster.resource-blocklist.poll-interval': '500 ms',
      'cluster.resource-blocklist.expiry.cron': '*/2 * * * * *',
      ...(o.detector
        ? {
            // The failure detector watches the simulated Flink job and YARN.
            'cluster.resource-blocklist.detector.mode': o.detector,
            'cluster.resource-blocklist.detector.flink.rest-address': sim.url,
            'cluster.resource-blocklist.detector.poll-interval': '1 s',
          }
        : {}),
      ...o.define,
    });
    const sidecar = await startSidecar({ config, logger: o.logger ?? silentLogger, env: {} });
    return {
      sim,
      sidecar,
      async close() {
        await sidecar.close();
        await sim.close();
      },
    };
  } catch (e) {
    await sim.close();
    throw inUse(e) ? new PortInUseError('sidecar', o.restPort) : e;
  }
}
