/**
 * src/ stays in small units (#33): no function over 60 lines, from its first line (the declaration,
 * or the arrow's parameters) to its closing brace. Functions nested in another count in it too, and
 * are measured themselves; tests and benches may keep longer ones where a story reads better.
 */
import { strict as assert } from 'node:assert';
import { AstNode, parseSource, readSource, sourceFiles, walk } from './source-ast';

const MAX_LINES = 60;

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression', 'ClassMethod', 'PrivateMethod', 'Constructor', 'MethodProperty', 'GetterProperty', 'SetterProperty']);

function keyName(key: unknown): string | undefined {
  const k = key as AstNode | undefined;
  if (!k) return undefined;
  if (typeof k.value === 'string') return k.value;
  if (k.type === 'PrivateName') return `#${String((k.id as AstNode | undefined)?.value ?? k.value)}`;
  return undefined;
}

/** A function's name as a reader would say it: its own, or the variable, property or call that holds it. */
function nameOf(fn: AstNode, parent: AstNode | undefined): string {
  const own = keyName(fn.identifier) ?? keyName(fn.key);
  if (own) return fn.type === 'Constructor' ? 'constructor' : own;
  if (parent?.type === 'VariableDeclarator') return keyName(parent.id) ?? '(anonymous)';
  if (parent?.type === 'KeyValueProperty' || parent?.type === 'ClassProperty') return keyName(parent.key) ?? '(anonymous)';
  if (parent?.type === 'CallExpression' || parent?.type === 'ExprOrSpread') return '(callback)';
  return '(anonymous)';
}

/** Each function of a file: its name, first line and length in lines. */
export function functionLengths(source: string): { name: string; line: number; length: number }[] {
  const parsed = parseSource(source);
  const out: { name: string; line: number; length: number }[] = [];
  // swc's FunctionDeclaration and its function share one node: the span is the declaration's.
  walk(parsed.body, (n, parent) => {
    if (!FUNCTIONS.has(n.type) || !n.span) return;
    if (n.type === 'FunctionExpression' && parent?.type === 'ExportDefaultDeclaration') return;
    const first = parsed.lineOf(n.span.start);
    const last = parsed.lineOf(n.span.end - 1);
    out.push({ name: nameOf(n, parent), line: first, length: last - first + 1 });
  });
  return out;
}

describe('code: no function over 60 lines in src/ (#33)', () => {
  it('measures functions as written (the check can fail)', () => {
    const body = Array.from({ length: 60 }, (_, i) => `  x(${i});`);
    const source = [
      'export function long(): void {', ...body, '}',
      'const arrow = (a: number) => {', '  return a;', '};',
      'class K {', '  constructor() {', '    y();', '  }', '  m(): number {', '    return [1].map((v) => {', '      return v;', '    })[0];', '  }', '}',
      'const o = { f() { return 1; }, g: function () { return 2; } };',
    ].join('\n');
    assert.deepEqual(functionLengths(source).map((f) => [f.name, f.line, f.length]), [
      ['long', 1, 62],
      ['arrow', 63, 3],
      ['constructor', 67, 3],
      ['m', 70, 5],
      ['(callback)', 71, 3],
      ['f', 76, 1],
      ['g', 76, 1],
    ]);
  });

  it(`no function of src/ over ${MAX_LINES} lines`, () => {
    const files = sourceFiles('src');
    let functions = 0;
    const over: string[] = [];
    for (const f of files) {
      for (const fn of functionLengths(readSource(f))) {
        functions++;
        if (fn.length > MAX_LINES) over.push(`${f}:${fn.line} ${fn.name}: ${fn.length} lines`);
      }
    }
    assert.ok(functions > 1000, `the functions were found (${functions})`);
    assert.deepEqual(over, []);
  });
});
