/**
 * The audit trail's edge: one JSON line per mutation attempt — who, from where, what, before/after,
 * outcome — through the main logger (field `audit: true`) and, when configured, appended to a
 * dedicated file. Secrets never reach it (principals are names, never tokens).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { WireItem, isPermanent, toWire } from '../model/item';
import { AuditSink } from '../model/audit';
import { Logger } from '../core/logger';

type AuditLine = {
  audit: true;
  at: string;
  op: string;
  id: string;
  who: string;
  from: string;
  outcome: string;
  before?: WireItem;
  after?: WireItem;
  detail?: string;
  cause?: string;
  dryRun?: boolean;
};

export function createAuditSink(logger: Logger, file?: string, now: () => number = Date.now): AuditSink {
  if (file) fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const fd = file ? fs.openSync(file, 'a') : undefined;
  // The line is built for the logger and the file: with neither taking it (a level above info
  // and no audit file) a write would pay for a timestamp, two item copies and a message for nothing.
  const logged = (): boolean => logger.isLevelEnabled?.('info') !== false;
  return {
    takes: () => fd !== undefined || logged(),
    record(r) {
      const toLog = logged();
      if (!toLog && fd === undefined) return;
      const line: AuditLine = { audit: true, at: new Date(now()).toISOString(), op: r.op, id: r.id, who: r.who, from: r.from, outcome: r.outcome };
      if (r.before) line.before = toWire(r.before);
      if (r.after) line.after = toWire(r.after);
      if (r.detail) line.detail = r.detail;
      if (r.cause !== undefined) line.cause = r.cause;
      if (r.dryRun) line.dryRun = true;
      // The message is for people: an end as a time, a permanent one as such (the fields keep the wire's values).
      const ends = r.after ? (isPermanent(r.after.endTimestamp) ? 'permanent' : `ends ${new Date(r.after.endTimestamp).toISOString()}`) : '';
      const what = r.after ? ` (${r.after.action}, cause "${r.after.cause}", ${ends})` : '';
      if (toLog)
        logger.info(`audit${r.dryRun ? ' (dry run)' : ''}: ${r.op} ${r.id} → ${r.outcome} by ${r.who} from ${r.from}${what}${r.detail ? `: ${r.detail}` : ''}`, line);
      if (fd !== undefined) fs.writeSync(fd, JSON.stringify(line) + '\n');
    },
  };
}
