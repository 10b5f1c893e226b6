/** `blocklist version`: the product's, the runtime's and the AMRMProxy interceptor's versions. */
import { Command, Option } from 'commander';
import { releaseInfo } from '../release-info';
import { toJson } from '../format';

export function register(program: Command): void {
  program
    .command('version')
    .description("print the product's, the Node.js runtime's and the AMRMProxy interceptor's versions")
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .action((flags: { output: string }) => {
      const v = releaseInfo();
      if (flags.output === 'json') {
        process.stdout.write(toJson(v));
        return;
      }
      const runtime = v.bundled ? `(bundled${v.runtimePackage ? `: ${v.runtimePackage}` : ''})` : `(host: ${v.nodePath})`;
      process.stdout.write(
        [
          `product      flink-yarn-blocklist ${v.product}`,
          `runtime      Node.js ${v.node} ${runtime}`,
          `interceptor  blocklist-amrm-interceptor ${v.interceptor} (the one this release is built and tested with)`,
          `home         ${v.home}`,
        ].join('\n') + '\n',
      );
    });
}
