/**
 * `blocklist quickstart` (what `npm start` runs): the sidecar on its embedded default — an SQLite
 * file — wired to a YARN simulator, plus a page of what to try next. Ctrl-C stops both.
 */
import * as fs from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { createLogger } from '../../log/logger';
import { isEffective } from '../../model/effective';
import { BlockedItem } from '../../model/item';
import { EXIT } from '../exit-codes';

/** Removes an SQLite store and its WAL side files, so the quickstart starts with an empty blocklist. */
function removeStoreFile(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
}

/**
 * The banner's line about the store. The quickstart's file outlives the process on purpose (blocks
 * survive a restart, as in production), so a second start must not claim an empty blocklist.
 */
export function storeSummary(items: readonly BlockedItem[], now: number, file: string, api: string): string[] {
  const live = items.filter((it) => isEffective(it, now));
  if (!live.length) return [`  curl -s ${api}/blocklist                       # the blocklist (empty)`];
  const names = live.slice(0, 5).map((it) => it.id).join(', ') + (live.length > 5 ? `, … (+${live.length - 5})` : '');
  return [
    `  curl -s ${api}/blocklist                       # the blocklist: ${live.length} item(s) kept in ${file} from an earlier run (${names})`,
    `                                                   # start clean: npm start -- --fresh`,
  ];
}

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
    .option('--store <file>', 'SQLite file (kept across runs)', 'data/quickstart.db')
    .option('--fresh', 'delete the SQLite file first: start with an empty blocklist')
    .option('--nodes <n>', 'simulated NodeManagers', (v) => Number(v), 12)
    .option('--containers <n>', 'task manager containers the simulated Flink job keeps', (v) => Number(v), 16)
    .action(async (f: { port: number; simPort: number; store: string; nodes: number; containers: number; fresh?: boolean }) => {
      const logger = createLogger({ format: 'text', level: 'info' });
      let local;
      try {
        if (f.fresh) removeStoreFile(f.store);
        local = await (await import('../../quickstart/local-cluster.js')).startLocalCluster({ restPort: f.port, simPort: f.simPort, sqlitePath: f.store, nodes: f.nodes, containers: f.containers, tickMs: 500, logger, detector: 'shadow' });
      } catch (e) {
        process.stderr.write(`blocklist quickstart: cannot start: ${(e as Error).message}\n`);
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
          `  web console       ${api}/ui/   (open it in a browser)`,
          `  YARN simulator    ${sim.url}   (${hosts.length} nodes, ${sim.cluster.taskManagerCount} task managers of ${sim.cluster.applicationId})`,
          `  store             ${sidecar.store.description}`,
          '',
          'Try next, in another terminal:',
          ...storeSummary(await sidecar.store.list(), Date.now(), f.store, api),
          `  curl -s -XPUT ${api}/blocklist/nodes/${hosts[0]} ${json} \\`,
          `       -d '{"action":"MARK_BLOCKED","timeout":"600000","cause":"Hot machine"}'`,
          `  curl -s ${sim.url}/amrm/v1/blacklist           # YARN's blacklist for the job now holds it`,
          `  npx blocklist list                               # the same, as a table`,
          `  npx blocklist block ${busy} --cause "No space left on device" --evacuate --wait`,
          `  curl -s ${api}/status                          # sync state, evacuations`,
          `  npx blocklist unblock ${hosts[0]} ${busy}`,
          `  curl -s -XPOST ${sim.url}/sim/v1/flink/failures ${json} -d '{"host":"${busy}","exception":"java.io.IOException: No space left on device"}'`,
          `  npx blocklist detector                           # the failure detector (shadow mode): what it would block, and why`,
          '  npm run demo                                     # a scripted story, start to end',
          '',
          'Other ports: npm start -- --port 8190 --sim-port 8188.   Empty blocklist: npm start -- --fresh.',
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
