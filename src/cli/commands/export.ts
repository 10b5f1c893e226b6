/**
 * `blocklist export`: the blocklist as a YARN exclude file (XML with per-host <timeout>, or plain
 * text) or as JSON. The YARN formats hold hosts and evacuation timeouts only, so task managers are
 * left out (said on stderr); JSON holds everything an import can set again.
 * Round trip: import → export → import gives the same hosts and timeouts (XML), the same hosts
 * (text), the same items apart from start time and audit stamps (JSON).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, Option } from 'commander';
import { ApiItem } from '../client';
import { runAction } from '../errors';
import { ExportEntry, formatText, formatYarnXml } from '../exclude-file';
import { isoTime, shortAction, toJson, wireMs } from '../format';
import { CommonFlags, addCommonOptions, note, withClient, write } from './common';

interface ExportFlags extends CommonFlags {
  format: 'yarn-xml' | 'text' | 'json';
  file?: string;
  scope?: string;
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

export function render(items: ApiItem[], format: ExportFlags['format'], now: number): { text: string; skipped: string[] } {
  if (format === 'json') return { text: toJson(items.map(exportItem)), skipped: [] };
  const nodes = items.filter((i) => i.kind === 'node');
  // Exclude files name hosts: task managers and racks have no place in them.
  const skipped = items.filter((i) => i.kind !== 'node').map((i) => i.id);
  const entries: ExportEntry[] = nodes.map((it) => {
    const end = wireMs(it.endTimestamp);
    return {
      host: it.id,
      timeout: it.evacuationTimeout ?? null,
      note: `${shortAction(it.action)} ${Number.isFinite(end) ? `until ${isoTime(end)}` : 'permanently'}: ${it.cause}`,
    };
  });
  const header = `exported by blocklist at ${isoTime(now)}: ${entries.length} host(s)`;
  return { text: format === 'yarn-xml' ? formatYarnXml(entries, header) : formatText(entries, header), skipped };
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
    .option('--scope <scope>', "only this scope: 'cluster' or an application id");
  addCommonOptions(cmd, []).action(
    runAction(async (flags: ExportFlags) => {
      const map = await withClient(flags, (c) => c.list({ scope: flags.scope }));
      const items = Object.values(map).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const { text, skipped } = render(items, flags.format, Date.now());
      if (skipped.length) note(`${leftOut(skipped)} left out: a YARN exclude file holds hosts only (use --format json): ${skipped.join(', ')}`);
      if (!flags.file) return write(text);
      const tmp = path.join(path.dirname(path.resolve(flags.file)), `.${path.basename(flags.file)}.${process.pid}.tmp`);
      fs.writeFileSync(tmp, text);
      fs.renameSync(tmp, flags.file);
      note(`wrote ${flags.file}`);
    }),
  );
}
