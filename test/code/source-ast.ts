/**
 * The source of src/ as syntax trees, for the checks of its shape (test/code/*.unit.test.ts).
 * Parsed with swc (the parser the layering check already uses): the TypeScript 7 compiler's API
 * is an unstable ES-module client of the native binary, too heavy for a unit test.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseSync } from '@swc/core';
import { repoRoot } from '../support/paths';

/** A node of swc's tree, read loosely: the checks look at a few fields of a few node types. */
export interface AstNode {
  type: string;
  span?: { start: number; end: number };
  [field: string]: unknown;
}

export interface ParsedSource {
  body: AstNode[];
  /** The 1-based line of a byte position of swc's (1-based, counted in UTF-8 bytes). */
  lineOf(pos: number): number;
}

export function parseSource(text: string): ParsedSource {
  const mod = parseSync(text, { syntax: 'typescript', tsx: false, comments: false }) as unknown as { body: AstNode[] };
  const bytes = Buffer.from(text, 'utf8');
  const lineStarts: number[] = [0];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) lineStarts.push(i + 1);
  const lineOf = (pos: number): number => {
    const at = pos - 1;
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (lineStarts[mid] <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  return { body: mod.body, lineOf };
}

/** Every .ts file under `dir` (relative to the repository), recursively, as repository paths. */
export function sourceFiles(dir: string): string[] {
  const abs = path.join(repoRoot, dir);
  return fs.readdirSync(abs, { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(rel);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

export function readSource(rel: string): string {
  return fs.readFileSync(path.join(repoRoot, rel), 'utf8');
}

/** Calls `visit` on every node below `node`, parents first. */
export function walk(node: unknown, visit: (n: AstNode, parent: AstNode | undefined) => void, parent?: AstNode): void {
  if (Array.isArray(node)) {
    for (const n of node) walk(n, visit, parent);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const n = node as AstNode;
  const isNode = typeof n.type === 'string';
  if (isNode) visit(n, parent);
  for (const [k, v] of Object.entries(n)) if (k !== 'span' && v && typeof v === 'object') walk(v, visit, isNode ? n : parent);
}
