#!/usr/bin/env node
/**
 * The one `blocklist` executable: the sidecar, the YARN simulator, and the admin commands.
 * Each subcommand lives in src/cli/commands/ and registers itself through commands/index.ts.
 */
import { Command, CommanderError } from 'commander';
import { registerCommands } from './commands';
import { EXIT } from './exit-codes';
import { productVersion } from './release-info';

/** `argv` as process.argv (node, script, args…): its first argument picks which command modules load. */
export function buildProgram(argv?: readonly string[]): Command {
  const program = new Command();
  program
    .name('blocklist')
    .description(
      'FLIP-224 blocklist sidecar for Flink on YARN: block sick nodes or task managers with a cause and an expiry;\n' +
        "the sidecar keeps YARN's blacklist for the job equal to the blocklist and evacuates blocked nodes.",
    )
    .version(productVersion(), '-V, --version')
    .showSuggestionAfterError(true)
    .exitOverride();
  registerCommands(program, argv?.[2]);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram(argv);
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.OK;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version exit 0; usage errors exit 2 (commander already printed the message).
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT.OK;
      return EXIT.USAGE;
    }
    throw e;
  }
}

/** Runs the executable and sets the process exit code (bin/blocklist calls this). */
export function run(argv: string[] = process.argv): void {
  main(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`blocklist: ${(e as Error).message ?? String(e)}\n`);
      process.exitCode = EXIT.ERROR;
    },
  );
}

if (require.main === module) run();
