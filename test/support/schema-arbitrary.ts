/**
 * fast-check arbitraries drawn from JSON Schemas (the subset the API's OpenAPI document uses:
 * $ref, anyOf, allOf, enum, string patterns and lengths, integer bounds, booleans, objects with
 * required keys and no others, arrays), mixed with near misses: out-of-range numbers, strings
 * with one bad character, a required key left out, an unknown key, a value of another type.
 * The generator does not decide validity: the caller judges each value against the same schema
 * with ajv, and compares the server's answer with that judgement.
 */
import fc from 'fast-check';

export type Schema = Record<string, unknown>;

/** fast-check's stringMatching knows no lookahead: the lookaheads (length bounds) are left to the judge. */
export function withoutLookaheads(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '\\') {
      out += pattern.slice(i, i + 2);
      i++;
    } else if (pattern.startsWith('(?=', i)) {
      let depth = 0;
      for (; i < pattern.length; i++) {
        if (pattern[i] === '\\') i++;
        else if (pattern[i] === '(') depth++;
        else if (pattern[i] === ')' && --depth === 0) break;
      }
    } else out += pattern[i];
  }
  return out;
}

const junk: fc.Arbitrary<unknown> = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string({ maxLength: 12 }), fc.constant(''), fc.constant([]), fc.constant({}));
/** Characters that break most patterns: control, blank, separator, non-ASCII, a surrogate pair. */
const badChar = fc.constantFrom('\u0000', '\n', ' ', ',', '/', ':', '*', '%', '..', 'é', '\u{1F600}', '-', '_');

export interface ArbitraryOptions {
  /** Resolves `#/components/schemas/x`. */
  resolve: (ref: string) => Schema;
  /** How deep objects may nest (the API's bodies are shallow). */
  depth?: number;
}

/** Values for `schema`: mostly ones it should accept, some near misses. */
export function arbitraryOf(schema: Schema, o: ArbitraryOptions): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 3, arbitrary: valid(schema, o) }, { weight: 1, arbitrary: nearMiss(schema, o) });
}

function valid(schema: Schema, o: ArbitraryOptions): fc.Arbitrary<unknown> {
  if (typeof schema.$ref === 'string') return valid(o.resolve(schema.$ref), o);
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as Schema[]).map((s) => valid({ ...stripComb(schema), ...s }, o)));
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  switch (schema.type) {
    case 'string':
      return stringOf(schema);
    case 'integer':
      return fc.integer({ min: Math.max(Number(schema.minimum ?? -(2 ** 31)), Number.MIN_SAFE_INTEGER), max: Math.min(Number(schema.maximum ?? 2 ** 31), Number.MAX_SAFE_INTEGER) });
    case 'number':
      return fc.double({ noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(valid((schema.items as Schema) ?? {}, o), { maxLength: Math.min(Number(schema.maxItems ?? 4), 4) });
    case 'object':
      return objectOf(schema, o);
    default:
      return junk;
  }
}

function stripComb(s: Schema): Schema {
  const { anyOf: _a, ...rest } = s;
  return rest;
}

function stringOf(schema: Schema): fc.Arbitrary<string> {
  const patterns = [schema.pattern, ...((schema.allOf as Schema[] | undefined) ?? []).map((a) => a.pattern)].filter((p): p is string => typeof p === 'string');
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : 64;
  const free = fc.string({ maxLength: Math.min(max, 40), minLength: Number(schema.minLength ?? 0) });
  if (!patterns.length) return fc.oneof(free, fc.string({ maxLength: max, minLength: Math.max(0, max - 2) }));
  // The last pattern is the most specific one; the others are judged.
  return fc.stringMatching(new RegExp(withoutLookaheads(patterns[patterns.length - 1])));
}

function objectOf(schema: Schema, o: ArbitraryOptions): fc.Arbitrary<Record<string, unknown>> {
  const props = (schema.properties as Record<string, Schema> | undefined) ?? {};
  const required = (schema.required as string[] | undefined) ?? [];
  const depth = o.depth ?? 2;
  const inner = { ...o, depth: depth - 1 };
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, s] of Object.entries(props)) model[k] = depth > 0 ? valid(s, inner) : junk;
  // `not: {required: [a, b]}` (two fields that exclude each other): keep one of them.
  const exclusive = ((schema.not as Schema | undefined)?.required as string[] | undefined) ?? [];
  return fc.record(model, { requiredKeys: required.filter((k) => k in props) }).map((x) => {
    if (exclusive.length > 1 && exclusive.every((k) => k in x)) delete x[exclusive[0]];
    return x;
  });
}

function nearMiss(schema: Schema, o: ArbitraryOptions): fc.Arbitrary<unknown> {
  if (typeof schema.$ref === 'string') return nearMiss(o.resolve(schema.$ref), o);
  const v = valid(schema, o);
  const misses: fc.Arbitrary<unknown>[] = [junk];
  if (schema.type === 'string' || schema.anyOf || schema.pattern) {
    misses.push(fc.tuple(v, badChar, fc.nat()).map(([s, c, at]) => (typeof s === 'string' ? s.slice(0, at % (s.length + 1)) + c + s.slice(at % (s.length + 1)) : s)));
    if (typeof schema.maxLength === 'number') misses.push(fc.constant('x'.repeat(schema.maxLength + 1)));
  }
  if (schema.type === 'integer' || schema.anyOf) {
    if (typeof schema.maximum === 'number') misses.push(fc.constant(schema.maximum + 1));
    if (typeof schema.minimum === 'number') misses.push(fc.constant(schema.minimum - 1), fc.constant(0), fc.constant(1.5));
  }
  if (schema.type === 'string') misses.push(fc.string({ maxLength: 40 }));
  if (schema.type === 'object') {
    const required = (schema.required as string[] | undefined) ?? [];
    const props = Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {});
    const exclusive = ((schema.not as Schema | undefined)?.required as string[] | undefined) ?? [];
    misses.push(
      objectOf(schema, o).map((x) => ({ ...x, notAField: 1 })),
      ...(required.length ? [fc.tuple(objectOf(schema, o), fc.constantFrom(...required)).map(([x, k]) => Object.fromEntries(Object.entries(x).filter(([key]) => key !== k)))] : []),
      // One field a near miss, the others as they should be.
      ...(props.length ? [fc.tuple(objectOf(schema, o), fc.oneof(...props.map(([k, s]) => nearMiss(s, o).map((v) => [k, v] as const)))).map(([x, [k, v]]) => ({ ...x, [k]: v }))] : []),
      ...(exclusive.length > 1 ? [fc.tuple(objectOf(schema, o), ...exclusive.map((k) => valid(props.find(([p]) => p === k)?.[1] ?? {}, o))).map(([x, ...vs]) => ({ ...x, ...Object.fromEntries(exclusive.map((k, i) => [k, vs[i]])) }))] : []),
    );
  }
  return fc.oneof(...misses);
}
