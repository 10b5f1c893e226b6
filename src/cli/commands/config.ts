/**
 * `blocklist config`: the effective configuration, or the reference of every key.
 *
 * Without -c/-D/--local it asks the running sidecar (GET /config) first: what a newcomer wants to
 * see is what the process they started uses (`npm start` sets its own store path and ports), not
 * what conf/blocklist.yaml would give a new one. No sidecar answering → the local view, said so.
 */
import { Command } from 'commander';
import { ConfigEntry, ConfigError, describeConfig, describeConfigEntries } from '../../config/config';
import { configReferenceMarkdown } from '../../config/reference';
import { BlocklistClient, HttpTransport } from '../client';
import { CliError } from '../errors';
import { addConfigOptions, ConfigFlags, resolveConfig } from '../config-options';
import { addConnectionOptions, ConnectionFlags, resolveTarget } from '../settings';
import { EXIT } from '../exit-codes';

type Flags = ConfigFlags & ConnectionFlags & { markdown?: boolean; local?: boolean };

/** The running sidecar's configuration, or why there is none to show (a short read: 2 s at most). */
async function runningConfig(flags: Flags): Promise<{ url: string; entries: ConfigEntry[] } | { url?: string; why: string }> {
  let target;
  try {
    const app = flags.app;
    target = app !== undefined ? await (await import('../find-sidecar.js')).sidecarTarget({ ...flags, app }) : resolveTarget(flags);
  } catch (e) {
    return { why: (e as Error).message };
  }
  if (target.kind !== 'server') return { why: 'a store file was named, not a sidecar' };
  const client = new BlocklistClient(new HttpTransport(target.url, target.token, 2_000));
  try {
    return { url: target.url, entries: await client.config() };
  } catch (e) {
    return { url: target.url, why: e instanceof CliError ? e.message : String(e) };
  }
}

export function register(program: Command): void {
  const cmd = program
    .command('config')
    .description("print the effective configuration — the running sidecar's when one answers, else the local file's — or --markdown for the reference of every key")
    .option('--markdown', 'print the configuration reference as Markdown')
    .option('--local', 'show what conf/blocklist.yaml (or -c FILE) and -D give, without asking a running sidecar');
  addConnectionOptions(addConfigOptions(cmd)).action(async (flags: Flags) => {
    if (flags.markdown) {
      process.stdout.write(configReferenceMarkdown());
      return;
    }
    const wantsLocal = flags.local || flags.config !== undefined || (flags.define?.length ?? 0) > 0;
    if (!wantsLocal) {
      const running = await runningConfig(flags);
      if ('entries' in running) {
        process.stdout.write(`# the running sidecar at ${running.url}\n` + describeConfigEntries(running.entries).join('\n') + '\n');
        return;
      }
      process.stderr.write(`# no running sidecar to ask (${running.why}); showing the local configuration\n`);
    }
    try {
      process.stdout.write(describeConfig(resolveConfig(flags)).join('\n') + '\n');
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      process.stderr.write(`blocklist config: ${e.message}\n`);
      process.exitCode = EXIT.USAGE;
    }
  });
}
