/** `blocklist config`: the effective configuration, or the reference of every key. */
import { Command } from 'commander';
import { ConfigError, describeConfig } from '../../config/config';
import { configReferenceMarkdown } from '../../config/reference';
import { addConfigOptions, ConfigFlags, resolveConfig } from '../config-options';
import { EXIT } from '../exit-codes';

export function register(program: Command): void {
  const cmd = program
    .command('config')
    .description('print the effective configuration (with where each value came from), or --markdown for the reference of every key')
    .option('--markdown', 'print the configuration reference as Markdown');
  addConfigOptions(cmd).action((flags: ConfigFlags & { markdown?: boolean }) => {
    if (flags.markdown) {
      process.stdout.write(configReferenceMarkdown());
      return;
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
