/**
 * Subcommand registry. Each command module exports `register(program)`; add one line here per
 * module, with the command names it registers.
 *
 * Modules are loaded only when needed: a run whose first argument names a command loads just that
 * command's module (the AM container's `blocklist sidecar` does not load the admin commands, their
 * HTTP client and their parsers: ~2 MB of its idle RSS, docs/benchmarks.md); anything else (help,
 * a typo that wants a suggestion, `completion`, which walks every command) loads them all.
 */
import { Command } from 'commander';

type Register = (program: Command) => void;

const MODULES: ReadonlyArray<{ names: readonly string[]; load: () => { register: Register } }> = [
  { names: ['sidecar'], load: () => require('./sidecar') as typeof import('./sidecar') },
  { names: ['config'], load: () => require('./config') as typeof import('./config') },
  { names: ['quickstart'], load: () => require('./quickstart') as typeof import('./quickstart') },
  { names: ['demo'], load: () => require('./demo') as typeof import('./demo') },
  { names: ['yarn-sim'], load: () => require('./yarn-sim') as typeof import('./yarn-sim') },
  { names: ['list', 'ls'], load: () => require('./list') as typeof import('./list') },
  { names: ['show'], load: () => require('./show') as typeof import('./show') },
  { names: ['block', 'block-tm', 'block-rack'], load: () => require('./block') as typeof import('./block') },
  { names: ['unblock', 'rm'], load: () => require('./unblock') as typeof import('./unblock') },
  { names: ['extend'], load: () => require('./extend') as typeof import('./extend') },
  { names: ['watch'], load: () => require('./watch') as typeof import('./watch') },
  { names: ['import'], load: () => require('./import') as typeof import('./import') },
  { names: ['export'], load: () => require('./export') as typeof import('./export') },
  { names: ['expire'], load: () => require('./expire') as typeof import('./expire') },
  { names: ['status'], load: () => require('./status') as typeof import('./status') },
  { names: ['detector'], load: () => require('./detector') as typeof import('./detector') },
  { names: ['version'], load: () => require('./version') as typeof import('./version') },
  // `completion` lists every command: it takes the path that registers them all.
  { names: [], load: () => require('./completion') as typeof import('./completion') },
];

/** Every command name a module registers (tests keep this table true to the modules). */
export const COMMAND_NAMES: readonly string[] = MODULES.flatMap((m) => m.names);

/** `first`: the run's first argument; a command name loads only its module, else every module loads. */
export function registerCommands(program: Command, first?: string): void {
  const one = first === undefined ? undefined : MODULES.find((m) => m.names.includes(first));
  for (const m of one ? [one] : MODULES) m.load().register(program);
}
