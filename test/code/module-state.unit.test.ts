/**
 * The decision step is pure (#33): what it remembers is a value its owner passes in and gets back,
 * never state of a module, so two engines in one process cannot see each other's. This fails on a
 * module-level `let`/`var`, or a module-level `const` holding a collection or object that can be
 * changed (a Map, Set, WeakMap, WeakSet, array or object literal not typed read-only, `as const`
 * or frozen), in the folders that hold the decisions.
 */
import { strict as assert } from 'node:assert';
import { AstNode, parseSource, readSource, sourceFiles } from './source-ast';

const WATCHED_DIRS = ['src/sync', 'src/model'];
const WATCHED_FILES = ['src/api/status-presenter.ts'];
const COLLECTIONS = new Set(['Map', 'Set', 'WeakMap', 'WeakSet', 'Array']);
const READONLY_TYPES = new Set(['Readonly', 'ReadonlyArray', 'ReadonlyMap', 'ReadonlySet']);

function watchedFiles(): string[] {
  const decide = sourceFiles('src/detect').filter((f) => /^src\/detect\/decide[^/]*\.ts$/.test(f));
  return [...WATCHED_DIRS.flatMap(sourceFiles), ...decide, ...WATCHED_FILES];
}

/** Whether a declared type says the value cannot be changed through it. */
function readOnlyType(t: AstNode | undefined): boolean {
  if (!t) return false;
  if (t.type === 'TsTypeOperator') return t.op === 'readonly';
  if (t.type === 'TsTypeReference') return READONLY_TYPES.has(String((t.typeName as AstNode).value));
  return false;
}

/** What in `init` can be changed by anyone holding it, or undefined when nothing can. */
function changeable(init: AstNode | undefined, declared: AstNode | undefined): string | undefined {
  if (!init || readOnlyType(declared)) return undefined;
  if (init.type === 'TsConstAssertion') return undefined;
  if (init.type === 'TsSatisfiesExpression' || init.type === 'TsAsExpression') return changeable(init.expression as AstNode, init.typeAnnotation as AstNode);
  if (init.type === 'NewExpression') {
    const name = String((init.callee as AstNode).value);
    return COLLECTIONS.has(name) ? `a ${name} that can be changed` : undefined;
  }
  if (init.type === 'ArrayExpression') return 'an array that can be changed';
  if (init.type === 'ObjectExpression') return 'an object that can be changed';
  return undefined;
}

/** The module-level mutable state a file declares, as `name (why)`. */
export function moduleState(source: string): string[] {
  const out: string[] = [];
  for (const item of parseSource(source).body) {
    const decl = (item.type === 'ExportDeclaration' ? item.declaration : item) as AstNode;
    if (decl?.type !== 'VariableDeclaration') continue;
    for (const d of decl.declarations as AstNode[]) {
      const id = d.id as AstNode;
      const name = typeof id.value === 'string' ? id.value : '(a destructuring)';
      if (decl.kind !== 'const') {
        out.push(`${name} (${String(decl.kind)})`);
        continue;
      }
      const why = changeable(d.init as AstNode | undefined, (id.typeAnnotation as AstNode | undefined)?.typeAnnotation as AstNode | undefined);
      if (why) out.push(`${name} (${why})`);
    }
  }
  return out;
}

describe('code: no module-level mutable state in the decision step (#33)', () => {
  it('src/sync, src/model, src/detect/decide*, src/api/status-presenter.ts hold none', () => {
    const files = watchedFiles();
    assert.ok(files.length > 40, `the files were found (${files.length})`);
    const found = files.flatMap((f) => moduleState(readSource(f)).map((s) => `${f}: ${s}`));
    assert.deepEqual(found, []);
  });

  it('the check sees what it should', () => {
    const source = [
      'let last = 1;',
      'export const memo = new WeakMap();',
      'const seen: Set<string> = new Set();',
      'const list: string[] = [];',
      'const byName = { a: 1 };',
      'const ok: ReadonlySet<string> = new Set(["a"]);',
      'const okList: readonly string[] = ["a"];',
      'const okObj: Readonly<{ a: number }> = { a: 1 };',
      'const okConst = ["a", "b"] as const;',
      'const okFrozen = Object.freeze({ a: 1 });',
      'const n = 3;',
      'function f() { let x = 1; const y = new Map(); return [x, y]; }',
    ].join('\n');
    assert.deepEqual(moduleState(source), ['last (let)', 'memo (a WeakMap that can be changed)', 'seen (a Set that can be changed)', 'list (an array that can be changed)', 'byName (an object that can be changed)']);
  });
});
