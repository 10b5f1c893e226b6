/** Stable exit codes of the `blocklist` executable (documented in README and docs/cli.md). */
export const EXIT = {
  OK: 0,
  ERROR: 1,
  USAGE: 2,
  CONFLICT: 3,
  NOT_FOUND: 4,
  UNREACHABLE: 5,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
