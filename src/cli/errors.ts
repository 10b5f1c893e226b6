/**
 * The one error type admin commands throw: a one-line message that says what to do, and the exit
 * code it maps to. `runAction` prints it as `blocklist <command>: <message>` and sets the code, so
 * no command writes to stderr or touches process.exitCode itself.
 */
import { Command } from 'commander';
import { EXIT, ExitCode } from './exit-codes';

export class CliError extends Error {
  constructor(
    message: string,
    readonly code: ExitCode = EXIT.ERROR,
    /** Further lines (e.g. every validation problem); printed indented under the message. */
    readonly details: string[] = [],
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export const usage = (message: string, details: string[] = []) => new CliError(message, EXIT.USAGE, details);

/** The command path for messages: "blocklist block-tm". */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * Wraps a commander action: CliError → its message on stderr and its exit code; anything else is
 * a bug and exits 1 with the message (the stack only with BLOCKLIST_DEBUG=1).
 */
export function runAction<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const cmd = args[args.length - 1] as Command;
    try {
      await fn(...args);
    } catch (e) {
      const where = cmd instanceof Command ? commandPath(cmd) : 'blocklist';
      if (e instanceof CliError) {
        process.stderr.write(`${where}: ${e.message}\n${e.details.map((d) => `  - ${d}\n`).join('')}`);
        process.exitCode = e.code;
        return;
      }
      const err = e as Error;
      process.stderr.write(`${where}: unexpected error: ${err?.message ?? String(e)}${process.env.BLOCKLIST_DEBUG ? `\n${err?.stack ?? ''}` : ' (set BLOCKLIST_DEBUG=1 for details)'}\n`);
      process.exitCode = EXIT.ERROR;
    }
  };
}
