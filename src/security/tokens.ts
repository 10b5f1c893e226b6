/**
 * Bearer tokens for the REST API (docs/security.md): a file maps each token to a principal
 * {name, role: admin | viewer}. docs/security.md documents the format:
 *
 *   tokens:
 *     "k3Jx…at-least-16-chars":            { name: alice, role: admin }
 *     "sha256:<64 hex digits>":            { name: grafana, role: viewer }   # hash of the token
 *
 * Only SHA-256 digests are kept in memory after loading. Lookup hashes the presented token and
 * compares it with *every* configured digest using crypto.timingSafeEqual, without an early exit,
 * so neither the time taken nor which entry matched leaks how close a guess was. (Comparing
 * equal-length digests also hides the real tokens' lengths.)
 *
 * Error messages name the entry by position and name, never by its token.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import YAML from 'yaml';
import { Principal, Role } from '../core/principal';

/** Shorter secrets are refused: a token is a password that never expires. */
export const MIN_TOKEN_LENGTH = 16;
/** Principal names reach log and audit lines: a plain, bounded alphabet keeps them unforgeable there. */
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
/** RFC 6750 b64token; anything else cannot be sent in an Authorization header anyway. */
export const TOKEN_RE = /^[A-Za-z0-9\-._~+/]+=*$/;
const HASH_PREFIX = 'sha256:';

export class TokenFileError extends Error {
  constructor(readonly file: string, readonly problems: string[]) {
    super(`token file ${file}: ${problems.join('; ')}`);
    this.name = 'TokenFileError';
  }
}

interface Entry {
  digest: Buffer;
  principal: Principal;
}

export function sha256(text: string): Buffer {
  return crypto.createHash('sha256').update(text, 'utf8').digest();
}

/** What the API's auth needs from a token source: a fixed table, or one reloaded from its file. */
export interface TokenLookup {
  lookup(presented: string): Principal | undefined;
}

export class TokenTable implements TokenLookup {
  private readonly entries: readonly Entry[];

  constructor(entries: Entry[]) {
    this.entries = entries;
  }

  get size(): number {
    return this.entries.length;
  }

  /** The principal a presented token belongs to, or undefined. Constant time in the token's content. */
  lookup(presented: string): Principal | undefined {
    const digest = sha256(presented);
    let found: Principal | undefined;
    for (const e of this.entries) {
      // No break: every entry is compared whatever the outcome.
      if (crypto.timingSafeEqual(digest, e.digest) && found === undefined) found = e.principal;
    }
    return found;
  }

  /** Principal names by role, sorted (for reload audit lines: names, never tokens). */
  principals(): string[] {
    return this.entries.map((e) => `${e.principal.name} (${e.principal.role})`).sort();
  }

  /** True when both tables grant exactly the same tokens to the same principals. */
  sameGrants(other: TokenTable): boolean {
    const key = (t: TokenTable) =>
      t.entries
        .map((e) => `${e.digest.toString('hex')} ${e.principal.name} ${e.principal.role}`)
        .sort()
        .join('\n');
    return key(this) === key(other);
  }

  /** Counts by role, for the start-up log line (names and tokens stay out of it). */
  roles(): Record<Role, number> {
    const out: Record<Role, number> = { admin: 0, viewer: 0 };
    for (const e of this.entries) out[e.principal.role]++;
    return out;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses a token file's text (YAML, of which JSON is a subset). Pure, for tests and the fuzz suite. */
export function parseTokenFile(text: string, file = '<tokens>'): TokenTable {
  let doc: unknown;
  try {
    // uniqueKeys: a token listed twice is an error, not "the last one wins".
    doc = YAML.parse(text, { uniqueKeys: true, maxAliasCount: 0 });
  } catch (e) {
    // The parser's message may quote the offending line, which may hold a token: keep only its kind.
    const code = (e as { code?: unknown }).code;
    throw new TokenFileError(file, [`not valid YAML or JSON${typeof code === 'string' ? ` (${code})` : ''}`]);
  }
  if (!isObject(doc) || !isObject(doc.tokens)) {
    throw new TokenFileError(file, ['expected a top-level "tokens" map of token → {name, role}']);
  }
  const unknownTop = Object.keys(doc).filter((k) => k !== 'tokens');
  const problems: string[] = unknownTop.map((k) => `unknown top-level field '${k.slice(0, 40)}'`);
  const entries: Entry[] = [];
  const seen = new Map<string, string>();
  Object.entries(doc.tokens).forEach(([key, value], i) => {
    const where = `entry ${i + 1}`;
    const digest = tokenDigest(key, where, problems);
    const principal = entryPrincipal(value, where, problems);
    if (!digest || !principal) return;
    const hex = digest.toString('hex');
    const dup = seen.get(hex);
    if (dup !== undefined) {
      problems.push(`${where} (${principal.name}): the same token as ${dup}`);
      return;
    }
    seen.set(hex, `${where} (${principal.name})`);
    entries.push({ digest, principal });
  });
  if (problems.length) throw new TokenFileError(file, problems);
  if (entries.length === 0) throw new TokenFileError(file, ['no tokens: the file must grant at least one token, or auth would lock everyone out']);
  return new TokenTable(entries);
}

/** The SHA-256 an entry's key grants (the token's, or the one a "sha256:" key names); undefined, with the problem, for a bad key. */
function tokenDigest(key: string, where: string, problems: string[]): Buffer | undefined {
  if (key.startsWith(HASH_PREFIX)) {
    const hex = key.slice(HASH_PREFIX.length);
    if (/^[0-9a-fA-F]{64}$/.test(hex)) return Buffer.from(hex, 'hex');
    problems.push(`${where}: a "sha256:" key must be followed by 64 hex digits`);
  } else if (key.length < MIN_TOKEN_LENGTH) {
    problems.push(`${where}: token is shorter than ${MIN_TOKEN_LENGTH} characters`);
  } else if (!TOKEN_RE.test(key)) {
    problems.push(`${where}: token may only contain letters, digits and - . _ ~ + / (then '=' padding)`);
  } else {
    return sha256(key);
  }
  return undefined;
}

/** The {name, role} an entry grants; undefined, with every problem, when either is wrong. */
function entryPrincipal(value: unknown, where: string, problems: string[]): Principal | undefined {
  if (!isObject(value)) {
    problems.push(`${where}: expected {name, role}`);
    return undefined;
  }
  const extra = Object.keys(value).filter((k) => k !== 'name' && k !== 'role');
  if (extra.length) problems.push(`${where}: unknown field(s) ${extra.map((k) => `'${k.slice(0, 40)}'`).join(', ')}`);
  const { name, role } = value;
  const named = typeof name === 'string' && NAME_RE.test(name);
  if (!named) problems.push(`${where}: name must be 1-64 letters, digits or . _ @ - (starting with a letter or digit)`);
  if (role !== 'admin' && role !== 'viewer') {
    problems.push(`${where}${named ? ` (${name})` : ''}: role must be admin or viewer`);
    return undefined;
  }
  return named ? { name, role } : undefined;
}

export interface LoadedTokens {
  table: TokenTable;
  /** Set when the file can be read by group or others (mode & 0o077). */
  warning?: string;
}

export function loadTokenFile(file: string): LoadedTokens {
  let text: string;
  let mode: number;
  try {
    mode = fs.statSync(file).mode;
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new TokenFileError(file, [`cannot read it: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`]);
  }
  const table = parseTokenFile(text, file);
  const out: LoadedTokens = { table };
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    out.warning = `token file ${file} is readable by group or others (mode ${(mode & 0o777).toString(8)}); chmod 600 it`;
  }
  return out;
}
