/**
 * `blocklist yarn-sim`: the YARN simulator (RM REST API + AMRM proxy + control API on one port)
 * for demos, integration tests and benchmarks. Runs until SIGINT/SIGTERM. See docs/yarn-simulator.md.
 */
import { Command, InvalidArgumentError } from 'commander';
import { createLogger } from '../../log/logger';
// Only the plain option values at registration; the simulator and Fastify load when the command runs.
import { DEFAULT_TICK_MS, NEW_ATTEMPT_BLACKLIST_MODES, NewAttemptBlacklist, RM_CONTAINERS_SHAPES, RmContainersShape } from '../../sim/options';
import { EXIT } from '../exit-codes';

const int = (name: string, min: number) => (v: string): number => {
  if (!/^\d+$/.test(v.trim()) || Number(v) < min) throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}`);
  return Number(v);
};
const oneOf = <T extends string>(name: string, values: readonly T[]) => (v: string): T => {
  if (!(values as readonly string[]).includes(v)) throw new InvalidArgumentError(`${name} must be one of ${values.join(', ')}`);
  return v as T;
};

interface SimFlags {
  port: number;
  host: string;
  nodes: number;
  containers: number;
  racks?: number;
  seed: number;
  tick: number;
  slots?: number;
  epoch?: number;
  newAttemptBlacklist: NewAttemptBlacklist;
  containersShape: RmContainersShape;
  logFormat: 'text' | 'json';
}

export function register(program: Command): void {
  program
    .command('yarn-sim')
    .description('run the YARN simulator: RM REST API, AMRM proxy and control API on one port (docs/yarn-simulator.md)')
    .requiredOption('--port <port>', 'TCP port (0 = any free port)', int('--port', 0))
    .option('--nodes <n>', 'number of NodeManagers', int('--nodes', 1), 20)
    .option('--containers <n>', 'task-manager containers the application keeps running', int('--containers', 0), 40)
    .option('--host <addr>', 'bind address', '127.0.0.1')
    .option('--racks <n>', 'number of racks (default: one per 20 nodes)', int('--racks', 1))
    .option('--seed <n>', 'seed for placement and injected faults', int('--seed', 0), 1)
    .option('--tick <ms>', 'allocation round (AM heartbeat) interval in ms; 0 = only on POST /sim/v1/allocate', int('--tick', 0), DEFAULT_TICK_MS)
    .option('--slots <n>', 'task-manager containers per node (default: twice the even share, at least 4)', int('--slots', 1))
    .option('--epoch <n>', "RM epoch in container ids (container_e<NN>_…); default none", int('--epoch', 0))
    .option('--new-attempt-blacklist <mode>', `blacklist of a new app attempt: ${NEW_ATTEMPT_BLACKLIST_MODES.join(' | ')}`, oneOf('--new-attempt-blacklist', NEW_ATTEMPT_BLACKLIST_MODES), 'scheduler-only')
    .option('--containers-shape <shape>', `JSON of the RM's attempt-containers endpoint: ${RM_CONTAINERS_SHAPES.join(' | ')}`, oneOf('--containers-shape', RM_CONTAINERS_SHAPES), 'real')
    .option('--log-format <fmt>', 'text | json', oneOf('--log-format', ['text', 'json'] as const), 'text')
    .action(async (f: SimFlags) => {
      const logger = createLogger({ format: f.logFormat, stderr: true });
      let sim;
      try {
        const { startSimulator } = await import('../../sim/server.js');
        sim = await startSimulator({
          port: f.port,
          host: f.host,
          nodes: f.nodes,
          containers: f.containers,
          seed: f.seed,
          tickMs: f.tick,
          newAttemptBlacklist: f.newAttemptBlacklist,
          rmContainersShape: f.containersShape,
          ...(f.racks !== undefined ? { racks: f.racks } : {}),
          ...(f.slots !== undefined ? { slotsPerNode: f.slots } : {}),
          ...(f.epoch !== undefined ? { epoch: f.epoch } : {}),
          logger,
        });
      } catch (e) {
        process.stderr.write(`blocklist yarn-sim: cannot start: ${(e as Error).message}\n`);
        process.exitCode = EXIT.ERROR;
        return;
      }
      const s = sim;
      // Always printed: scripts and tests read the URLs from these lines.
      process.stdout.write(
        `yarn-sim listening on ${s.url}\n` +
          `  RM REST API:  ${s.rmUrl}/ws/v1/cluster\n` +
          `  AMRM proxy:   ${s.amrmUrl}/amrm/v1\n` +
          `  control API:  ${s.url}/sim/v1/state\n` +
          `  application:  ${s.cluster.applicationId} (${s.cluster.currentAttempt.id}), ${s.cluster.nodes.length} nodes, ${s.cluster.taskManagerCount}/${s.cluster.target} containers\n`,
      );
      await new Promise<void>((resolve) => {
        const stop = (sig: string) => {
          process.stderr.write(`\nblocklist yarn-sim: ${sig}, shutting down\n`);
          s.close().then(resolve, resolve);
        };
        process.once('SIGINT', () => stop('SIGINT'));
        process.once('SIGTERM', () => stop('SIGTERM'));
      });
    });
}
