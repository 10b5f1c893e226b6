/**
 * am-proxy's main Java stays in small units (docs/architecture.md): no file over 400 lines, no
 * method or constructor over 60. Methods are found by their declaration at a type's member
 * indentation and measured to their closing brace; lambdas and nested classes count with the
 * member that holds them.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../support/paths';

const MAX_FILE = 400;
const MAX_METHOD = 60;

function javaFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'target' ? [] : javaFiles(p);
    return p.endsWith('.java') && p.includes(`${path.sep}src${path.sep}main${path.sep}`) ? [p] : [];
  });
}

/** A member declaration that opens a body: modifiers, a type or nothing (constructor), a name, '('. */
const DECLARATION = /^ {2}(?: {2})*(?:(?:public|protected|private|static|final|synchronized|abstract|default)\s+)*(?:<[^>]+>\s+)?(?:[\w.<>[\], ?]+\s+)?\w+\s*\([^;]*$/;
const NOT_A_DECLARATION = /^\s*(?:return|if|for|while|switch|catch|try|else|new|throw)\b/;

/** Each method's first line (1-based) and length, from its declaration to its closing brace. */
export function methodLengths(text: string): { line: number; length: number; name: string }[] {
  const lines = text.split('\n');
  const out: { line: number; length: number; name: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (!DECLARATION.test(l) || NOT_A_DECLARATION.test(l) || /\b(class|interface|enum)\b/.test(l) || l.split('(')[0].includes('=')) continue;
    let j = i;
    while (j < lines.length && !lines[j].includes('{') && !lines[j].includes(';')) j++;
    if (j >= lines.length || !lines[j].includes('{')) continue;
    let depth = 0;
    let k = j;
    for (; k < lines.length; k++) {
      depth += (lines[k].match(/\{/g) ?? []).length - (lines[k].match(/\}/g) ?? []).length;
      if (depth <= 0) break;
    }
    out.push({ line: i + 1, length: k - i + 1, name: l.trim().split('(')[0].split(/\s+/).pop() ?? '?' });
    i = k;
  }
  return out;
}

describe('am-proxy: small Java units', () => {
  it('measures methods as declared (the check can fail)', () => {
    const long = ['class A {', '  void f() {', ...Array.from({ length: 61 }, () => '    x();'), '  }', '}'].join('\n');
    assert.deepEqual(methodLengths(long).map((m) => [m.name, m.length]), [['f', 63]]);
    assert.deepEqual(methodLengths('class A {\n  A(int x) {\n    y();\n  }\n}').map((m) => m.name), ['A']);
  });

  it(`no main Java file over ${MAX_FILE} lines, no method over ${MAX_METHOD}`, () => {
    const files = javaFiles(path.join(repoRoot, 'am-proxy'));
    assert.ok(files.length > 20, 'the interceptor sources were found');
    const over: string[] = [];
    let methods = 0;
    for (const f of files) {
      const text = fs.readFileSync(f, 'utf8');
      const rel = path.relative(repoRoot, f);
      const n = text.split('\n').length;
      if (n > MAX_FILE) over.push(`${rel}: ${n} lines`);
      for (const m of methodLengths(text)) {
        methods++;
        if (m.length > MAX_METHOD) over.push(`${rel}:${m.line} ${m.name}: ${m.length} lines`);
      }
    }
    assert.ok(methods > 100, `the methods were found (${methods})`);
    assert.deepEqual(over, []);
  });
});
