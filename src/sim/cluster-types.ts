/** The simulated cluster's shapes: its options, nodes, containers and application attempts. */
import { Clock } from '../core/clock';
import { NodeState } from '../yarn/types';
import { NewAttemptBlacklist } from './options';

export interface ClusterOptions {
  /** Number of NodeManagers. */
  nodes: number;
  /** Task-manager containers the application keeps running. */
  containers: number;
  /** Racks; nodes are split into contiguous blocks. Default: one rack per 20 nodes. */
  racks?: number;
  seed?: number;
  /** Task-manager containers one node can hold. Default: enough for twice the even share (≥ 4). */
  slotsPerNode?: number;
  /** The RM's cluster timestamp (part of every id). */
  clusterTimestamp?: number;
  /** The application's sequence number (application_<ts>_<NNNN>). */
  appNumber?: number;
  /** RM epoch written into container ids as e<epoch>_ (YARN does after an RM restart); undefined = none. */
  epoch?: number;
  newAttemptBlacklist?: NewAttemptBlacklist;
  /** Completed containers the proxy remembers (a ring; the oldest fall out). Default 1024. */
  completedRingSize?: number;
  /** Flink's default: task managers survive an AM failover. */
  keepContainersAcrossAttempts?: boolean;
  clock?: Clock;
}

export interface SimNode {
  index: number;
  host: string;
  rack: string;
  /** NodeId host:port. */
  nodeId: string;
  httpAddress: string;
  state: NodeState;
  healthReport: string;
  lastHealthUpdate: number;
  /** Ids of this application's live containers on the node (the AM's included). */
  containers: Set<string>;
}

export interface SimContainer {
  id: string;
  host: string;
  startedTime: number;
  /** The AM container of the current attempt (never released through the proxy). */
  isAm: boolean;
}

export interface SimAttempt {
  number: number;
  id: string;
  amContainerId: string;
  amHost: string;
  startTime: number;
  finishedTime: number;
  state: 'RUNNING' | 'FAILED';
  registered: boolean;
}
