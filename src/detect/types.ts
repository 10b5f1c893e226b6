/**
 * The detector's vocabulary. A *source* reports *failures* (one observation: an exception in Flink's
 * history, a container YARN saw complete); the detector groups them into *incidents* (one per host
 * per job restart or container loss, however many exceptions it carries) and decides per host.
 */

/** One observation a source attributes to a YARN host. */
export interface Failure {
  /** Stable across re-reads: the same observation read twice has the same key (counted once). */
  key: string;
  /** The source's name (a metric label). */
  source: string;
  /** YARN node host name (nodeHostName), the id a node item names. */
  host: string;
  /** When it failed, epoch ms. */
  at: number;
  /**
   * Failures with the same group on one host are one incident: e.g. every exception of one Flink
   * restart (the root and its concurrent exceptions) shares `flink:<job>:<restart timestamp>`.
   */
  group: string;
  /**
   * What the job-fault contrast compares across hosts: the same signature on `job-fault-hosts`
   * distinct hosts is the job's fault. An exception class with its message's shape, or "exit 1".
   */
  signature: string;
  /** Short, human: "java.io.IOException: No space left on device", "exit 137". */
  summary: string;
  /** The YARN container, when known: a Flink failure and a YARN completion of one container are one incident. */
  containerId?: string;
  /** The Flink job id, when the failure comes from one. */
  job?: string;
}

/** A node's state as the RM reports it, kept as evidence (not a reason to block by itself). */
export interface HealthObservation {
  host: string;
  state: string;
  healthReport: string;
  /** When the detector saw it, epoch ms. */
  seenAt: number;
  /** The RM's lastHealthUpdate, when it reports one. */
  lastHealthUpdate?: number;
}

/** Incidents: failures of one host grouped (see Failure.group). */
export interface Incident {
  host: string;
  /** The first failure's time. */
  at: number;
  /** Groups merged into this incident (a restart, a container). */
  groups: string[];
  containerIds: string[];
  sources: string[];
  /** Each distinct observation: at most a few kept for evidence. */
  failures: IncidentFailure[];
}

export interface IncidentFailure {
  key: string;
  at: number;
  source: string;
  signature: string;
  summary: string;
  containerId?: string;
  job?: string;
}
