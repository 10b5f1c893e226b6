/** `blocklist sidecar`: runs the service until SIGINT/SIGTERM. */
import { Command, InvalidArgumentError } from 'commander';
import { ConfigError, describeConfig } from '../../config/config';
import { addConfigOptions, ConfigFlags, resolveConfig } from '../config-options';
import { EXIT } from '../exit-codes';
import { readYarnSite, YarnSiteError } from '../../yarn/yarn-site';
import { applyMemoryMode } from '../../sidecar/v8-settings';

/** SIGTERM/SIGINT end the process within this, whatever state the store and YARN are in. */
export const STOP_DEADLINE_MS = 4000;

function parsePid(v: string): number {
  const pid = Number(v);
  if (!Number.isSafeInteger(pid) || pid < 1) throw new InvalidArgumentError(`'${v}' is not a process id`);
  return pid;
}

export function register(program: Command): void {
  const cmd = program
    .command('sidecar')
    .description('run the blocklist sidecar: REST API, store, YARN sync, evacuation and expiry')
    .option('--print-config', 'print the effective configuration (secrets masked) and exit')
    .option('--exit-with-parent <pid>', 'exit when the process <pid> is gone (the wrapper of Flink\'s JobManager passes its own: the sidecar ends with the AM)', parsePid)
    .option('--yarn-site <file>', "take the RM web address(es) from Hadoop's yarn-site.xml when yarn.resourcemanager.webapp.address is not set (HA and HTTPS_ONLY aware)");
  addConfigOptions(cmd).action(async (flags: ConfigFlags & { printConfig?: boolean; yarnSite?: string; exitWithParent?: number }) => {
    let config;
    try {
      config = resolveConfig(flags);
      if (flags.yarnSite && !config.values['yarn.resourcemanager.webapp.address']) {
        const site = readYarnSite(flags.yarnSite);
        config = resolveConfig({ ...flags, define: [`yarn.resourcemanager.webapp.address=${site.rmWebAddresses.join(',')}`, ...(flags.define ?? [])] });
      }
    } catch (e) {
      if (e instanceof YarnSiteError) {
        process.stderr.write(`blocklist sidecar: ${e.message}\n`);
        process.exitCode = EXIT.USAGE;
        return;
      }
      if (e instanceof ConfigError) {
        process.stderr.write(`blocklist sidecar: ${e.message}\n`);
        process.exitCode = EXIT.USAGE;
        return;
      }
      throw e;
    }
    if (flags.printConfig) {
      process.stdout.write(describeConfig(config).join('\n') + '\n');
      return;
    }
    applyMemoryMode(config);
    let sidecar;
    try {
      sidecar = await (await import('../../sidecar/sidecar.js')).startSidecar({ config });
    } catch (e) {
      process.stderr.write(`blocklist sidecar: cannot start: ${(e as Error).message}\n`);
      process.exitCode = e instanceof ConfigError ? EXIT.USAGE : EXIT.ERROR;
      return;
    }
    // Always printed (whatever the log level): scripts and tests read the address from this line.
    process.stdout.write(`blocklist sidecar listening on ${sidecar.url} (store ${sidecar.store.description})\n`);
    await runUntilStopped(sidecar, flags.exitWithParent);
  });
}

/** Until SIGINT/SIGTERM, or until the process `parentPid` is gone (Flink's JVM in the AM container). */
function runUntilStopped(s: { close(): Promise<void> }, parentPid: number | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (why: string) => {
      process.stderr.write(`\nblocklist sidecar: ${why}, shutting down\n`);
      // A graceful close waits for a running pass and open requests, each bounded by a store or
      // YARN timeout that can be longer than a supervisor's patience (and a store that is down
      // makes every one of them run to its end): past STOP_DEADLINE_MS the process just exits.
      // Nothing is lost by that: every acknowledged write is already durable in the store.
      setTimeout(() => {
        process.stderr.write(`blocklist sidecar: shutdown not finished within ${STOP_DEADLINE_MS} ms; exiting now\n`);
        process.exit(0);
      }, STOP_DEADLINE_MS).unref();
      s.close().then(resolve, resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
    if (parentPid !== undefined) {
      const watch = setInterval(() => {
        if (processGone(parentPid)) {
          clearInterval(watch);
          stop(`process ${parentPid} (--exit-with-parent) is gone`);
        }
      }, PARENT_CHECK_MS);
      watch.unref();
    }
  });
}

const PARENT_CHECK_MS = 1000;

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
