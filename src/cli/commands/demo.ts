/** `blocklist demo` (what `npm run demo` runs): the scripted story of src/quickstart/demo.ts. */
import { Command } from 'commander';
import { EXIT } from '../exit-codes';

export function register(program: Command): void {
  program
    .command('demo')
    .description('run a scripted story against a sidecar and a YARN simulator: block, evacuate, unblock, expire')
    .action(async () => {
      process.exitCode = (await (await import('../../quickstart/demo.js')).runDemo()) ? EXIT.OK : EXIT.ERROR;
    });
}
