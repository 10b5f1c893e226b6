/**
 * Token file reload without a restart: on SIGHUP, when the file changes, and at a request that finds
 * the file changed since it was last read (one stat per request: the watcher's settle delay left a
 * revoked token working for ~0.1 s). A revoked token stops working at the next request; a file that
 * no longer parses is refused and the previous grants stay
 * (an operator's typo must not lock everyone out, nor open the door). Every reload attempt writes
 * one audit record naming the principals added and removed — names, never tokens.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Principal } from '../core/principal';
import { Logger } from '../core/logger';
import { AuditSink } from '../model/audit';
import { TokenFileError, TokenLookup, TokenTable, loadTokenFile } from './tokens';

export type TokenReloadTrigger = 'SIGHUP' | 'file change' | 'request';

export type TokenReloadOutcome =
  | { result: 'reloaded'; added: string[]; removed: string[]; admin: number; viewer: number }
  | { result: 'unchanged' }
  | { result: 'refused'; problems: string[] };

/** The file's identity and last change, as stat tells them: another value means another file or content. */
function fileStamp(file: string): string | undefined {
  try {
    const s = fs.statSync(file);
    return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
  } catch {
    return undefined;
  }
}

/** The token table the API asks, swapped whole on a successful reload. */
export class ReloadableTokens implements TokenLookup {
  /** The file as it was when last read (successfully or not): a request reloads only when it moved. */
  private stamp: string | undefined;
  /** Reloads as a request found the file changed (the watch audits it); absent: a plain reload. */
  onChanged: (() => void) | undefined;

  constructor(
    readonly file: string,
    private table: TokenTable,
  ) {
    this.stamp = fileStamp(file);
  }

  lookup(presented: string): Principal | undefined {
    const now = fileStamp(this.file);
    if (now !== undefined && now !== this.stamp) (this.onChanged ?? (() => this.reload()))();
    return this.table.lookup(presented);
  }

  get current(): TokenTable {
    return this.table;
  }

  /** Reads the file again; keeps the old table when the new one is unreadable or invalid. */
  reload(): TokenReloadOutcome {
    this.stamp = fileStamp(this.file);
    let next: TokenTable;
    try {
      next = loadTokenFile(this.file).table;
    } catch (e) {
      if (!(e instanceof TokenFileError)) throw e;
      return { result: 'refused', problems: e.problems };
    }
    if (next.sameGrants(this.table)) return { result: 'unchanged' };
    const before = new Set(this.table.principals());
    const after = new Set(next.principals());
    this.table = next;
    const roles = next.roles();
    return {
      result: 'reloaded',
      added: [...after].filter((p) => !before.has(p)),
      removed: [...before].filter((p) => !after.has(p)),
      admin: roles.admin,
      viewer: roles.viewer,
    };
  }
}

export interface TokenWatchOptions {
  logger: Logger;
  audit: AuditSink;
  /** Quiet period after a file event before reading (editors write in several steps). */
  settleMs?: number;
}

export interface TokenWatch {
  /** One reload now, audited like the automatic ones. */
  reload(trigger: TokenReloadTrigger): TokenReloadOutcome;
  close(): void;
}

function describe(o: TokenReloadOutcome): string {
  switch (o.result) {
    case 'reloaded':
      return `${o.admin} admin, ${o.viewer} viewer; added: ${o.added.join(', ') || 'none'}; removed: ${o.removed.join(', ') || 'none'}`;
    case 'unchanged':
      return 'the file grants the same tokens';
    case 'refused':
      return `kept the previous tokens: ${o.problems.join('; ')}`;
  }
}

/**
 * Watches the file's folder, not the file: editors and `mv new tokens.yaml` replace the inode, which
 * a watch on the file itself stops seeing. SIGHUP is the explicit way (and works where inotify
 * does not, e.g. some network file systems).
 */
export function watchTokenFile(tokens: ReloadableTokens, opts: TokenWatchOptions): TokenWatch {
  const settleMs = opts.settleMs ?? 100;
  const base = path.basename(tokens.file);
  let timer: NodeJS.Timeout | undefined;

  const reload = (trigger: TokenReloadTrigger): TokenReloadOutcome => {
    const outcome = tokens.reload();
    const detail = describe(outcome);
    if (outcome.result === 'refused') opts.logger.error(`token file ${tokens.file} (${trigger}): ${detail}`);
    else if (outcome.result === 'reloaded') opts.logger.info(`token file ${tokens.file} reloaded (${trigger}): ${detail}`);
    if (outcome.result !== 'unchanged') {
      opts.audit.record({ op: 'reload-tokens', id: tokens.file, who: 'system', from: trigger, outcome: outcome.result, detail });
    }
    return outcome;
  };

  let watcher: fs.FSWatcher | undefined;
  try {
    watcher = fs.watch(path.dirname(path.resolve(tokens.file)), (_event, name) => {
      if (name !== null && name !== base) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => reload('file change'), settleMs);
      timer.unref();
    });
    watcher.unref();
  } catch (e) {
    opts.logger.warn(`cannot watch ${tokens.file} for changes (${(e as Error).message}); reload it with SIGHUP`);
  }
  const onHup = () => reload('SIGHUP');
  process.on('SIGHUP', onHup);
  tokens.onChanged = () => reload('request');

  return {
    reload,
    close() {
      if (timer) clearTimeout(timer);
      watcher?.close();
      process.off('SIGHUP', onHup);
      tokens.onChanged = undefined;
    },
  };
}
