/**
 * `blocklist list`: the blocklist as a table (or json/yaml/wide/name), filtered by kind/scope/action.
 * By default it shows the job's own view: what applies to the sidecar's application now (its own
 * blocks, cluster-wide ones and blocks shared with other jobs: GET /blocklist?appliesTo=), since
 * that is what YARN enforces for it; --all lists every item in the store, --applies-to another job's.
 */
import { Command, Option } from 'commander';
import { runAction } from '../errors';
import { toJson, toYaml } from '../format';
import { listTable } from '../render';
import { parseScope } from '../../model/validate';
import { parseApplicationId } from '../../model/ids';
import { usage } from '../errors';
import { CommonFlags, addCommonOptions, note, painter, parseAction, withClient, write } from './common';

interface ListFlags extends CommonFlags {
  kind?: 'node' | 'taskmanager';
  scope?: string;
  action?: string;
  appliesTo?: string;
  all?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('list')
    .alias('ls')
    .description('list blocked nodes and task managers: id, kind, action, cause, since, ends, task managers, sync state')
    .addOption(new Option('--kind <kind>', 'only this kind').choices(['node', 'taskmanager']))
    .option('--scope <scope>', "only this scope: 'cluster' or an application id")
    .option('--action <action>', 'only this action: block (MARK_BLOCKED) or evacuate (MARK_BLOCKED_AND_EVACUATE_TASKS)')
    .option('--applies-to <app>', "what applies to this application now: its own, cluster-wide and shared blocks (default: the sidecar's application)")
    .option('--all', "every item in the store, whichever job it applies to");
  addCommonOptions(cmd, ['table', 'wide', 'json', 'yaml', 'name']).action(
    runAction(async (flags: ListFlags) => {
      if (flags.scope !== undefined) {
        const errs: string[] = [];
        parseScope(flags.scope, errs);
        if (errs.length) throw usage(`--scope: ${errs[0]}`);
      }
      if (flags.appliesTo !== undefined) {
        const errs: string[] = [];
        const a = parseApplicationId(flags.appliesTo);
        if (!a.ok) errs.push(a.error);
        if (errs.length) throw usage(`--applies-to: ${errs[0]}`);
      }
      if (flags.all && (flags.appliesTo !== undefined || flags.scope !== undefined)) throw usage('--all lists everything: give it without --applies-to and --scope');
      const action = flags.action ? parseAction(flags.action) : undefined;
      const { map, view } = await withClient(flags, async (c) => {
        // The job's own view unless told otherwise: the sidecar's application, when it knows one.
        let appliesTo = flags.appliesTo;
        if (appliesTo === undefined && !flags.all && flags.scope === undefined && !c.transport.direct) appliesTo = (await c.status()).applicationId;
        return { map: await c.list({ kind: flags.kind, scope: flags.scope, action, appliesTo }), view: appliesTo };
      });
      const items = Object.values(map).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      switch (flags.output ?? 'table') {
        case 'json':
          return write(toJson(map));
        case 'yaml':
          return write(toYaml(map));
        case 'name':
          return write(items.map((i) => i.id + '\n').join(''));
        default:
          if (!items.length) return note('nothing is blocked' + (view ? ` that applies to ${view}` : '') + (flags.kind || flags.scope || action ? ' (with these filters)' : ''));
          write(listTable(items, Date.now(), painter(flags), flags.output === 'wide'));
          if (view && flags.appliesTo === undefined) note(`what applies to ${view} (its own, cluster-wide and shared blocks); --all lists every item in the store`);
      }
    }),
  );
}
