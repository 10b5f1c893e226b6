/**
 * docs/architecture.md's file map stays true (#33): every file of src/ is named there (a name
 * that more than one folder has, in its folder's row or by its path; the sync engine's files may be
 * named in docs/sync-engine.md's table instead; a `*` pattern such as `watch-*.ts` names many), and
 * every file a folder's row names exists.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../support/paths';
import { readSource, sourceFiles } from './source-ast';

interface Row {
  /** The folders the row is about, e.g. src/store/. */
  folders: string[];
  /** The file names and patterns the row names, in backticks. */
  names: string[];
}

export function mapRows(markdown: string): Row[] {
  return markdown
    .split('\n')
    .filter((l) => l.startsWith('| `src/'))
    .map((l) => {
      const [first, ...rest] = l.split(' | ');
      return {
        folders: [...first.matchAll(/`(src\/[^`]*\/)`/g)].map((m) => m[1]),
        names: [...rest.join(' | ').matchAll(/`([A-Za-z0-9_.*/-]+\.ts)`/g)].map((m) => m[1]),
      };
    });
}

function named(file: string, dir: string, names: readonly string[]): boolean {
  const below = file.slice(dir.length);
  const base = path.posix.basename(file);
  return names.some((n) => {
    if (n === below || n === base || n === file) return true;
    if (!n.includes('*')) return false;
    const re = new RegExp(`^${n.replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}$`);
    return re.test(below) || re.test(base);
  });
}

/** The row of a file: the one whose folder is the longest prefix of the file's path. */
function rowOf(file: string, rows: readonly Row[]): { row: Row; dir: string } | undefined {
  let best: { row: Row; dir: string } | undefined;
  for (const row of rows) for (const dir of row.folders) if (file.startsWith(dir) && (!best || dir.length > best.dir.length)) best = { row, dir };
  return best;
}

describe('code: docs/architecture.md names every file of src/, and only files that exist (#33)', () => {
  const architecture = fs.readFileSync(path.join(repoRoot, 'docs/architecture.md'), 'utf8');
  const syncTable = [...readSource('docs/sync-engine.md').matchAll(/^\| `(src\/[^`]+\.ts)`/gm)].map((m) => m[1]);
  const rows = mapRows(architecture);

  it('every file of src/ is in its folder\'s row', () => {
    assert.ok(rows.length >= 15, `the folder rows were found (${rows.length})`);
    const files = sourceFiles('src');
    const everywhere = [...architecture.matchAll(/`([A-Za-z0-9_.*/-]+\.ts)`/g)].map((m) => m[1]);
    const count = new Map<string, number>();
    for (const f of files) count.set(path.posix.basename(f), (count.get(path.posix.basename(f)) ?? 0) + 1);
    const unnamed = files.filter((f) => {
      if (syncTable.includes(f)) return false;
      const base = path.posix.basename(f);
      if (everywhere.includes(f) || everywhere.includes(f.slice('src/'.length))) return false;
      if (count.get(base) === 1 && everywhere.includes(base)) return false;
      const r = rowOf(f, rows);
      return !r || !named(f, r.dir, r.row.names);
    });
    assert.deepEqual(unnamed, [], `not in docs/architecture.md: ${unnamed.join(', ')}`);
  });

  it('every file a row names exists', () => {
    const missing: string[] = [];
    for (const row of rows) {
      for (const n of row.names) {
        if (n.includes('*')) continue;
        const candidates = n.startsWith('src/') ? [n] : [...row.folders.map((d) => `${d}${n}`), `src/${n}`];
        const exists = candidates.some((c) => fs.existsSync(path.join(repoRoot, c))) || sourceFiles(row.folders[0].replace(/\/$/, '')).some((f) => f.endsWith(`/${n}`));
        if (!exists) missing.push(`${row.folders.join(' + ')}: ${n}`);
      }
    }
    assert.deepEqual(missing, []);
  });
});
