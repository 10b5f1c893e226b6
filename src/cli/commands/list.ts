/** `blocklist list`: the blocklist as a table (or json/yaml/wide/name), filtered by kind/scope/action. */
import { Command, Option } from 'commander';
import { runAction } from '../errors';
import { toJson, toYaml } from '../format';
import { listTable } from '../render';
import { parseScope } from '../../model/validate';
import { usage } from '../errors';
import { CommonFlags, addCommonOptions, note, painter, parseAction, withClient, write } from './common';

interface ListFlags extends CommonFlags {
  kind?: 'node' | 'taskmanager';
  scope?: string;
  action?: string;
}

export function register(program: Command): void {
  const cmd = program
    .command('list')
    .alias('ls')
    .description('list blocked nodes and task managers: id, kind, action, cause, since, ends, task managers, sync state')
    .addOption(new Option('--kind <kind>', 'only this kind').choices(['node', 'taskmanager']))
    .option('--scope <scope>', "only this scope: 'cluster' or an application id")
    .option('--action <action>', 'only this action: block (MARK_BLOCKED) or evacuate (MARK_BLOCKED_AND_EVACUATE_TASKS)');
  addCommonOptions(cmd, ['table', 'wide', 'json', 'yaml', 'name']).action(
    runAction(async (flags: ListFlags) => {
      if (flags.scope !== undefined) {
        const errs: string[] = [];
        parseScope(flags.scope, errs);
        if (errs.length) throw usage(`--scope: ${errs[0]}`);
      }
      const action = flags.action ? parseAction(flags.action) : undefined;
      const map = await withClient(flags, (c) => c.list({ kind: flags.kind, scope: flags.scope, action }));
      const items = Object.values(map).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      switch (flags.output ?? 'table') {
        case 'json':
          return write(toJson(map));
        case 'yaml':
          return write(toYaml(map));
        case 'name':
          return write(items.map((i) => i.id + '\n').join(''));
        default:
          if (!items.length) return note('nothing is blocked' + (flags.kind || flags.scope || action ? ' (with these filters)' : ''));
          write(listTable(items, Date.now(), painter(flags), flags.output === 'wide'));
      }
    }),
  );
}
