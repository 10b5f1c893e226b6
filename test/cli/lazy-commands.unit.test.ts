/**
 * `blocklist sidecar` (the AM container's command) loads the sidecar command's module only, not the
 * admin commands with their HTTP client and parsers; every other run registers every command, and
 * the registry's table of names is the modules' own.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { Command } from 'commander';
import { COMMAND_NAMES, registerCommands } from '../../src/cli/commands';
import { repoRoot } from '../support/paths';

/** The compiled modules of src/cli a fresh process has loaded after building the program for `args`. */
function loadedCliModules(args: string[]): string[] {
  const main = path.join(repoRoot, 'dist', 'src', 'cli', 'main.js');
  const script = `require(${JSON.stringify(main)}).buildProgram(['node', 'blocklist', ...${JSON.stringify(args)}]);
    process.stdout.write(JSON.stringify(Object.keys(require.cache)))`;
  const files = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as string[];
  return files.filter((f) => f.includes(`${path.sep}dist${path.sep}src${path.sep}cli${path.sep}`)).map((f) => path.basename(f));
}

describe('cli: command modules load when their command runs', () => {
  it('`blocklist sidecar` loads the sidecar command alone (no admin client)', () => {
    const loaded = loadedCliModules(['sidecar', '-c', 'x.yaml']);
    assert.ok(loaded.includes('sidecar.js'));
    for (const absent of ['client.js', 'list.js', 'block.js', 'import.js', 'render.js']) assert.ok(!loaded.includes(absent), `${absent} loaded: ${loaded.join(' ')}`);
  });

  it('help, an unknown word and completion load every command', () => {
    for (const args of [[], ['--help'], ['blok'], ['completion', 'bash']]) assert.ok(loadedCliModules(args).includes('block.js'), args.join(' '));
  });

  it('the table names exactly the commands and aliases the modules register', () => {
    const program = new Command();
    registerCommands(program);
    const registered = program.commands.flatMap((c) => [c.name(), ...c.aliases()]).filter((n) => n !== 'completion');
    assert.deepEqual([...registered].sort(), [...COMMAND_NAMES].sort());
    for (const name of COMMAND_NAMES) {
      const one = new Command();
      registerCommands(one, name);
      assert.ok(one.commands.some((c) => c.name() === name || c.aliases().includes(name)), name);
    }
  });
});
