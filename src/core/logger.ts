/**
 * The project's own logging port. Every layer logs through this small interface, so the model,
 * store and engine do not depend on winston (src/log/logger.ts builds the real one from winston,
 * whose Logger satisfies this interface structurally).
 */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

/** Structured fields carried with a line (component, ids, figures). Never secrets. */
export type LogFields = Record<string, unknown>;

export interface Logger {
  error(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
  log(level: LogLevel, message: string, fields?: LogFields): void;
  /** A logger whose lines also carry `fields` (e.g. `{ component: 'sync' }`). */
  child(fields: LogFields): Logger;
  /** Whether a line at `level` goes anywhere (absent: assume it does). Lets a caller skip building a costly line. */
  isLevelEnabled?(level: LogLevel): boolean;
}

const drop = (): void => undefined;

/** A logger that drops everything: unit tests and library use. */
export const silentLogger: Logger = {
  error: drop,
  warn: drop,
  info: drop,
  debug: drop,
  log: drop,
  child: () => silentLogger,
  isLevelEnabled: () => false,
};
