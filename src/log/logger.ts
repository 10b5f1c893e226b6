/**
 * Logs: winston, readable lines in a terminal (text) or one JSON object per line (json).
 * Components take a Logger (child loggers carry a `component` field); nothing logs secrets.
 */
import winston from 'winston';
import { Logger } from '../core/logger';

export type { Logger } from '../core/logger';
export type LogFormat = 'text' | 'json';

export interface LogOptions {
  format?: LogFormat;
  level?: string;
  /** Silence everything (tests). */
  silent?: boolean;
  /** Write to stderr instead of stdout (the CLI keeps stdout for its output). */
  stderr?: boolean;
}

const text = winston.format.printf((info) => {
  const { level, message, timestamp, component, ...rest } = info as winston.Logform.TransformableInfo & { timestamp?: string; component?: string };
  // An audit record's full before/after belongs in JSON output; a terminal gets the one-line message.
  const extras = rest.audit === true ? [] : Object.entries(rest).filter(([k]) => typeof k === 'string' && !k.startsWith('Symbol('));
  const tail = extras.length ? ' ' + extras.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ') : '';
  return `${timestamp} ${level.toUpperCase().padEnd(5)} ${component ? `[${component}] ` : ''}${String(message)}${tail}`;
});

/** The real logger: winston, which satisfies the project's Logger port structurally. */
export function createLogger(opts: LogOptions = {}): Logger {
  const format =
    opts.format === 'json'
      ? winston.format.combine(winston.format.timestamp(), winston.format.json())
      : winston.format.combine(winston.format.timestamp(), text);
  const logger = winston.createLogger({
    level: opts.level ?? 'info',
    silent: opts.silent ?? false,
    format,
    transports: [new winston.transports.Console({ stderrLevels: opts.stderr ? ['error', 'warn', 'info', 'debug', 'verbose', 'silly'] : ['error'] })],
  });
  // winston answers isLevelEnabled by walking a fresh copy of its transports on every call, and
  // hot paths ask per request (is the audit line or a push's line logged?): the answer is kept
  // while the logger's level is the same (its transports are fixed above).
  const ask = logger.isLevelEnabled.bind(logger);
  let known: { level: string; answers: Map<string, boolean> } | undefined;
  logger.isLevelEnabled = (level: string): boolean => {
    if (known?.level !== logger.level) known = { level: logger.level, answers: new Map() };
    let answer = known.answers.get(level);
    if (answer === undefined) known.answers.set(level, (answer = ask(level)));
    return answer;
  };
  return logger;
}
