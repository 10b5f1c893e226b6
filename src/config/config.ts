/**
 * Loading configuration: defaults < YAML file < environment (BLOCKLIST_…) < -Dkey=value flags.
 * Unknown keys and bad values stop start-up with the key named (and, for a typo, the nearest key).
 */
import * as fs from 'node:fs';
import YAML from 'yaml';
import { ConfigValues, KEYS, KeyName, envName, isKey } from './keys';
import { editDistance } from '../model/nearest';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export type Source = 'default' | 'file' | 'env' | 'flag';

export interface LoadedConfig {
  values: ConfigValues;
  sources: Record<KeyName, Source>;
  /** Each key's text as it was given (or its default's): what people wrote, '30 s' where the value is 30000. */
  given?: Record<KeyName, string>;
  file?: string;
}

export interface LoadOptions {
  file?: string;
  env?: NodeJS.ProcessEnv;
  /** -Dkey=value flags, already split at the first '='. */
  dynamic?: Record<string, string>;
}

/** The known key nearest to a misspelt one, if any is near enough to suggest. */
function nearest(key: string): string | undefined {
  const limit = Math.floor(Math.max(3, key.length / 5));
  let best: [number, string] | undefined;
  for (const k of Object.keys(KEYS)) {
    const d = editDistance(key, k, limit);
    if (!best || d < best[0]) best = [d, k];
  }
  return best && best[0] <= limit ? best[1] : undefined;
}

/** YAML scalars come as strings, numbers or booleans; keys compare as text. */
function scalarText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null) return '';
  return undefined;
}

/** Parses "-Dkey=value" / "key=value" strings. */
export function parseDynamicProperties(flags: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of flags) {
    const s = f.startsWith('-D') ? f.slice(2) : f;
    const eq = s.indexOf('=');
    if (eq <= 0) throw new ConfigError([`dynamic property '${f}' must be -Dkey=value`]);
    out[s.slice(0, eq).trim()] = s.slice(eq + 1);
  }
  return out;
}

export function loadConfig(opts: LoadOptions = {}): LoadedConfig {
  const problems: string[] = [];
  const raw = new Map<KeyName, [string, Source]>();
  for (const k of Object.keys(KEYS) as KeyName[]) raw.set(k, [KEYS[k].default, 'default']);

  const take = (k: string, v: string, source: Source, where: string) => {
    if (!isKey(k)) {
      const near = nearest(k);
      problems.push(`unknown key '${k}' in ${where}${near ? ` (did you mean '${near}'?)` : ''}`);
      return;
    }
    raw.set(k, [v, source]);
  };

  if (opts.file) {
    let text: string;
    try {
      text = fs.readFileSync(opts.file, 'utf8');
    } catch (e) {
      throw new ConfigError([`cannot read config file ${opts.file}: ${(e as Error).message}`]);
    }
    let doc: unknown;
    try {
      doc = YAML.parse(text);
    } catch (e) {
      throw new ConfigError([`config file ${opts.file} is not valid YAML: ${(e as Error).message.split('\n')[0]}`]);
    }
    if (doc !== null && doc !== undefined) {
      if (typeof doc !== 'object' || Array.isArray(doc)) throw new ConfigError([`config file ${opts.file} must be a map of flat keys (key: value)`]);
      for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
        const t = scalarText(v);
        if (t === undefined) problems.push(`key '${k}' in ${opts.file} must be a plain value, not a ${Array.isArray(v) ? 'list' : 'map'} (use flat keys like Flink's config.yaml)`);
        else take(k, t, 'file', opts.file);
      }
    }
  }

  const env = opts.env ?? {};
  for (const k of Object.keys(KEYS) as KeyName[]) {
    const v = env[envName(k)];
    if (v !== undefined) take(k, v, 'env', `environment variable ${envName(k)}`);
  }

  for (const [k, v] of Object.entries(opts.dynamic ?? {})) take(k, v, 'flag', `-D${k}`);

  const values: Record<string, unknown> = {};
  const sources: Record<string, Source> = {};
  const given: Record<string, string> = {};
  for (const [k, [v, source]] of raw) {
    try {
      values[k] = (KEYS[k] as { parse(r: string): unknown }).parse(v);
      sources[k] = source;
      given[k] = v.trim();
    } catch (e) {
      problems.push(`${k}: ${(e as Error).message}${source === 'default' ? '' : ` (from ${source})`}`);
    }
  }
  if (problems.length) throw new ConfigError(problems);
  return { values: values as ConfigValues, sources: sources as Record<KeyName, Source>, given: given as Record<KeyName, string>, file: opts.file };
}

/** The effective configuration as printable lines, secrets masked. */
/** One key of the effective configuration, as shown to people: secrets masked, never their value. */
export interface ConfigEntry {
  key: string;
  /** The value as JSON text, or '******' for a secret that is set. */
  value: string;
  /** The text as it was given ('30 s'), when it reads differently from the value (a duration's ms); never for a secret. */
  given?: string;
  source: string;
}

/** The effective configuration, every key, with where its value came from (`config`, GET /config). */
export function effectiveConfig(cfg: LoadedConfig): ConfigEntry[] {
  return (Object.keys(KEYS) as KeyName[]).map((k) => {
    const def = KEYS[k] as { secret?: boolean };
    const v = cfg.values[k];
    const value = def.secret && v ? '******' : JSON.stringify(v);
    const given = cfg.given?.[k];
    const differs = !def.secret && given !== undefined && given !== String(v) && given !== value;
    return { key: k, value, ...(differs ? { given } : {}), source: String(cfg.sources[k]) };
  });
}

/** One line per key for people: the text as given (a duration as '30 s', not 30000), and its source. */
export function describeConfigEntries(entries: ConfigEntry[]): string[] {
  return entries.map((e) => `${e.key}: ${e.given ?? e.value}  (${e.source})`);
}

export function describeConfig(cfg: LoadedConfig): string[] {
  return describeConfigEntries(effectiveConfig(cfg));
}
