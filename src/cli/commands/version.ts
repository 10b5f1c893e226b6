/** `blocklist version`: the product's, the runtime's and the AMRMProxy interceptor's versions (built with, and running). */
import { Command, Option } from 'commander';
import { releaseInfo } from '../release-info';
import { toJson } from '../format';
import { CliError, runAction } from '../errors';
import { EXIT } from '../exit-codes';
import { askRunningInterceptor, proxyWhere, runningLine } from '../running-interceptor';

interface VersionFlags {
  output: string;
  proxy?: string;
  proxySecretFile?: string;
}

export function register(program: Command): void {
  program
    .command('version')
    .description("print the product's, the Node.js runtime's and the AMRMProxy interceptor's versions (and the running interceptor's, when a proxy answers)")
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('--proxy <address>', "ask this AMRM proxy (host:port or URL) which interceptor runs (default: $BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_AMRM_PROXY_ADDRESS, else the interceptor's hand-off in $LOCAL_DIRS)")
    .option('--proxy-secret-file <file>', "the application's proxy secret (the hand-off's .secret file)")
    .action(
      runAction(async (flags: VersionFlags) => {
        const v = releaseInfo();
        const where = proxyWhere(flags);
        const running = where ? await askRunningInterceptor(where) : undefined;
        if (flags.output === 'json') {
          process.stdout.write(toJson(running ? { ...v, runningInterceptor: running } : v));
        } else {
          const runtime = v.bundled ? `(bundled${v.runtimePackage ? `: ${v.runtimePackage}` : ''})` : `(host: ${v.nodePath})`;
          const lines = [
            `product      flink-yarn-blocklist ${v.product}`,
            `runtime      Node.js ${v.node} ${runtime}`,
            `interceptor  blocklist-amrm-interceptor ${v.interceptor} (the one this release is built and tested with)`,
            ...(running ? [runningLine(running)] : []),
            `home         ${v.home}`,
          ];
          process.stdout.write(lines.join('\n') + '\n');
        }
        // Asked by name and nobody answered: a script checking the running version must see it.
        if (running?.kind === 'no-answer' && where?.source === '--proxy') throw new CliError(`the proxy at ${where.address} did not answer: ${running.error}`, EXIT.UNREACHABLE);
      }),
    );
}
