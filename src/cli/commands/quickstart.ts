/**
 * `blocklist quickstart` (what `npm start` runs): the sidecar on its embedded default — an SQLite
 * file — wired to a YARN simulator, plus a page of what to try next. Ctrl-C stops both.
 */
import { Command, InvalidArgumentError } from 'commander';
import { createLogger } from '../../log/logger';
import { EXIT } from '../exit-codes';

const port = (v: string): number => {
  if (!/^\d+$/.test(v) || Number(v) > 65535) throw new InvalidArgumentError('must be a port number');
  return Number(v);
};

export function register(program: Command): void {
  program
    .command('quickstart')
    .description('start the sidecar (SQLite store) together with a YARN simulator, and show what to try next')
    .option('--port <port>', 'REST API port of the sidecar', port, 8090)
    .option('--sim-port <port>', 'port of the YARN simulator (0 = any free port)', port, 8088)
    .option('--store <file>', 'SQLite file', 'data/quickstart.db')
    .option('--nodes <n>', 'simulated NodeManagers', (v) => Number(v), 12)
    .option('--containers <n>', 'task manager containers the simulated Flink job keeps', (v) => Number(v), 16)
    .action(async (f: { port: number; simPort: number; store: string; nodes: number; containers: number }) => {
      const logger = createLogger({ format: 'text', level: 'info' });
      let local;
      try {
        local = await (await import('../../quickstart/local-cluster.js')).startLocalCluster({ restPort: f.port, simPort: f.simPort, sqlitePath: f.store, nodes: f.nodes, containers: f.containers, tickMs: 500, logger });
      } catch (e) {
        const msg = (e as NodeJS.ErrnoException).code === 'EADDRINUSE' ? `${(e as Error).message}: is another sidecar running? use --port / --sim-port` : (e as Error).message;
        process.stderr.write(`blocklist quickstart: cannot start: ${msg}\n`);
        process.exitCode = EXIT.ERROR;
        return;
      }
      const { sim, sidecar } = local;
      const hosts = sim.cluster.nodes.map((n) => n.host);
      const busy = sim.cluster.nodes.find((n) => n.host !== hosts[0] && n.containers.size > 1)?.host ?? hosts[1];
      const api = sidecar.url;
      const json = "-H 'content-type: application/json'";
      process.stdout.write(
        [
          '',
          'flink-yarn-blocklist is running',
          `  sidecar REST API  ${api}   (FLIP-224 blocklist API, /status, /metrics)`,
          `  YARN simulator    ${sim.url}   (${hosts.length} nodes, ${sim.cluster.taskManagerCount} task managers of ${sim.cluster.applicationId})`,
          `  store             ${sidecar.store.description}`,
          '',
          'Try next, in another terminal:',
          `  curl -s ${api}/blocklist                       # the blocklist (empty)`,
          `  curl -s -XPUT ${api}/blocklist/nodes/${hosts[0]} ${json} \\`,
          `       -d '{"action":"MARK_BLOCKED","timeout":"600000","cause":"Hot machine"}'`,
          `  curl -s ${sim.url}/amrm/v1/blacklist           # YARN's blacklist for the job now holds it`,
          `  npx blocklist list                               # the same, as a table`,
          `  npx blocklist block ${busy} --cause "No space left on device" --evacuate --wait`,
          `  curl -s ${api}/status                          # sync state, evacuations`,
          `  npx blocklist unblock ${hosts[0]} ${busy}`,
          '  npm run demo                                     # a scripted story, start to end',
          '',
          'Ctrl-C stops the sidecar and the simulator.',
          '',
        ].join('\n'),
      );
      await new Promise<void>((resolve) => {
        const stop = () => local.close().then(resolve, resolve);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
