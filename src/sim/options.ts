/**
 * The simulator's start-up choices as plain values, with no imports: `blocklist yarn-sim` lists
 * them in its --help and checks its flags against them, and the CLI must not load the simulator
 * (nor Fastify) to register its commands. The simulator's modules re-export them.
 */

/** What the blacklist of a new application attempt starts as (see AmBlacklist#newAttempt in am-blacklist.ts). */
export type NewAttemptBlacklist = 'empty' | 'inherit' | 'scheduler-only';
export const NEW_ATTEMPT_BLACKLIST_MODES: readonly NewAttemptBlacklist[] = ['empty', 'inherit', 'scheduler-only'];

/** The JSON shape of the RM's attempt-containers endpoint (see rm-routes.ts). */
export type RmContainersShape = 'real' | 'documented';
export const RM_CONTAINERS_SHAPES: readonly RmContainersShape[] = ['real', 'documented'];

/** Allocation round (AM heartbeat) interval, ms. */
export const DEFAULT_TICK_MS = 500;
