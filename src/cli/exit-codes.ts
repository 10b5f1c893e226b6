/** Stable exit codes of the `blocklist` executable (documented in README and docs/cli.md). */
export const EXIT = {
  OK: 0,
  ERROR: 1,
  USAGE: 2,
  CONFLICT: 3,
  NOT_FOUND: 4,
  UNREACHABLE: 5,
  /** `--wait` gave up: --wait-timeout ran out (the evacuation goes on in the sidecar). */
  WAIT_TIMEOUT: 6,
  /** The block is stored but the safety cap holds it back: YARN was not told (sync state `deferred`). */
  DEFERRED: 7,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
