/** `blocklist show ID`: one item with its sync and evacuation status. */
import { Command } from 'commander';
import { runAction } from '../errors';
import { toJson, toYaml } from '../format';
import { itemDetails } from '../render';
import { CommonFlags, addCommonOptions, itemRef, painter, withClient, write } from './common';

export function register(program: Command): void {
  const cmd = program
    .command('show')
    .description('show one blocked node or task manager (NODE or NODE/CONTAINER) with its sync and evacuation status')
    .argument('<id>', 'node host name, or node/containerId for a task manager');
  addCommonOptions(cmd).action(
    runAction(async (id: string, flags: CommonFlags) => {
      const ref = itemRef(id);
      const item = await withClient(flags, (c) => c.get(ref.id));
      if (flags.output === 'json') return write(toJson(item));
      if (flags.output === 'yaml') return write(toYaml(item));
      write(itemDetails(item, Date.now(), painter(flags)));
    }),
  );
}
