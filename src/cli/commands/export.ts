/**
 * `blocklist export`: the blocklist as a YARN exclude file (XML with per-host <timeout>, or plain
 * text) or as JSON. The YARN formats hold hosts only, so task managers and racks are left out
 * (said on stderr); JSON holds everything an import can set again.
 *
 * An exclude file fed to `yarn rmadmin -refreshNodes` decommissions its hosts for every
 * application: that is an evacuation of the whole cluster, not a block. So an EVACUATE item
 * becomes a graceful decommission with its timeout, and a MARK_BLOCKED item, which moves nothing,
 * is left out unless --include-mark-blocked asks for it (the file's header says what each becomes).
 * The end and action travel where Hadoop's HostsFileReader does not look (XML: <endTimestamp> and
 * <action> in each <host>; text: the host's comment), so import reads them back.
 * Round trip: import → export → import gives the same hosts, timeouts, ends and actions (XML), the
 * same hosts, ends and actions (text), the same items apart from start time and audit stamps (JSON).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, Option } from 'commander';
import { ApiItem } from '../client';
import { runAction } from '../errors';
import { ExportEntry, formatText, formatYarnXml } from '../exclude-file';
import { isoTime, shortAction, toJson, wireMs } from '../format';
import { CommonFlags, addCommonOptions, note, withClient, write } from './common';
import { EVACUATE } from '../../model/item';

interface ExportFlags extends CommonFlags {
  format: 'yarn-xml' | 'text' | 'json';
  file?: string;
  scope?: string;
  includeMarkBlocked?: boolean;
}

/** The fields an import can set again, plus the timestamps and audit stamps for the record. */
function exportItem(it: ApiItem): Record<string, unknown> {
  const o: Record<string, unknown> = {
    id: it.id,
    kind: it.kind,
    action: it.action,
    startTimestamp: it.startTimestamp,
    endTimestamp: it.endTimestamp,
    cause: it.cause,
    scope: it.scope,
  };
  if (it.evacuationTimeout !== undefined) o.evacuationTimeout = it.evacuationTimeout;
  for (const k of ['createdBy', 'createdAt', 'updatedBy', 'updatedAt'] as const) if (it[k] !== undefined) o[k] = it[k];
  return o;
}

/** What yarn rmadmin -refreshNodes does with the file, said in its header. */
const BECOMES = [
  'fed to yarn rmadmin -refreshNodes, every host here is DECOMMISSIONED for every application of the cluster (not only blocked for one job):',
  'MARK_BLOCKED_AND_EVACUATE_TASKS -> graceful decommission, <timeout> = its evacuation timeout in seconds (none: -g or the RM default);',
  'MARK_BLOCKED -> also a decommission (its containers are drained too), so such hosts are left out unless the export was asked to include them;',
  'task managers and racks have no place in an exclude file. <endTimestamp>/<action> (or the comments of a text file) are for blocklist import; Hadoop ignores them.',
];

export interface Rendered {
  text: string;
  /** Items an exclude file cannot hold (task managers, racks). */
  skipped: string[];
  /** MARK_BLOCKED node items left out (a decommission is not a block). */
  markBlocked: string[];
}

export function render(items: ApiItem[], format: ExportFlags['format'], now: number, includeMarkBlocked = false): Rendered {
  if (format === 'json') return { text: toJson(items.map(exportItem)), skipped: [], markBlocked: [] };
  const nodes = items.filter((i) => i.kind === 'node');
  // Exclude files name hosts: task managers and racks have no place in them.
  const skipped = items.filter((i) => i.kind !== 'node').map((i) => i.id);
  const markBlocked = includeMarkBlocked ? [] : nodes.filter((i) => i.action !== EVACUATE).map((i) => i.id);
  const entries: ExportEntry[] = nodes
    .filter((it) => includeMarkBlocked || it.action === EVACUATE)
    .map((it) => {
      const end = wireMs(it.endTimestamp);
      const scope = it.scope && it.scope !== 'cluster' ? ` (scope ${it.scope}: a decommission covers every application)` : '';
      return {
        host: it.id,
        timeout: it.evacuationTimeout ?? null,
        ...(Number.isFinite(end) ? { end } : {}),
        action: it.action,
        note: `${shortAction(it.action)} ${Number.isFinite(end) ? `until ${isoTime(end)}` : 'permanently'}: ${it.cause}${scope}`,
      };
    });
  const header = [`exported by blocklist at ${isoTime(now)}: ${entries.length} host(s)`, ...BECOMES];
  const text = format === 'yarn-xml' ? formatYarnXml(entries, header) : formatText(entries, header);
  return { text, skipped, markBlocked };
}

/** "2 task manager item(s) and 1 rack item(s)": what an exclude file cannot hold, by kind (a rack id is its path). */
function leftOut(ids: readonly string[]): string {
  const racks = ids.filter((id) => id.startsWith('/')).length;
  const tms = ids.length - racks;
  return [tms ? `${tms} task manager item(s)` : '', racks ? `${racks} rack item(s)` : ''].filter(Boolean).join(' and ');
}

export function register(program: Command): void {
  const cmd = program
    .command('export')
    .description('write the blocklist as a YARN exclude file (yarn-xml, text) or JSON')
    .addOption(new Option('--format <format>', 'yarn-xml: hosts + <timeout>; text: hosts; json: every field').choices(['yarn-xml', 'text', 'json']).default('yarn-xml'))
    .option('-f, --file <path>', 'write here (atomically) instead of stdout')
    .option('--scope <scope>', "only this scope: 'cluster' or an application id")
    .option('--include-mark-blocked', 'also write MARK_BLOCKED hosts (yarn rmadmin -refreshNodes decommissions every host of the file, for every application)');
  addCommonOptions(cmd, []).action(
    runAction(async (flags: ExportFlags) => {
      const map = await withClient(flags, (c) => c.list({ scope: flags.scope }));
      const items = Object.values(map).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const { text, skipped, markBlocked } = render(items, flags.format, Date.now(), flags.includeMarkBlocked);
      if (skipped.length) note(`${leftOut(skipped)} left out: a YARN exclude file holds hosts only (use --format json): ${skipped.join(', ')}`);
      if (markBlocked.length) {
        note(`${markBlocked.length} MARK_BLOCKED host(s) left out: yarn rmadmin -refreshNodes decommissions every host of an exclude file for every application, which is more than a block; add --include-mark-blocked to write them anyway: ${markBlocked.join(', ')}`);
      }
      if (!flags.file) return write(text);
      const tmp = path.join(path.dirname(path.resolve(flags.file)), `.${path.basename(flags.file)}.${process.pid}.tmp`);
      fs.writeFileSync(tmp, text);
      fs.renameSync(tmp, flags.file);
      note(`wrote ${flags.file}`);
    }),
  );
}
