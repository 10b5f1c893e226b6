/**
 * The simulated cluster's nodes: `node0001.sim.local` … with NodeManager ports 8041 (RPC, the
 * NodeId) and 8042 (web), split into contiguous blocks of racks `/rack01` … (YARN's rack paths;
 * one rack per 20 nodes unless told otherwise). Names are zero-padded so they sort as numbered.
 */
import { SimNode } from './cluster-types';

const pad = (n: number, w: number): string => String(n).padStart(w, '0');

/** `count` RUNNING nodes, healthy since `now`, holding no container yet. */
export function buildNodes(count: number, racksWanted: number | undefined, now: number): SimNode[] {
  const racks = Math.max(1, Math.min(racksWanted ?? Math.ceil(count / 20), count));
  const perRack = Math.ceil(count / racks);
  const width = Math.max(4, String(count).length);
  const rackWidth = Math.max(2, String(racks).length);
  const nodes: SimNode[] = [];
  for (let i = 0; i < count; i++) {
    const host = `node${pad(i + 1, width)}.sim.local`;
    nodes.push({
      index: i,
      host,
      rack: `/rack${pad(Math.floor(i / perRack) + 1, rackWidth)}`,
      nodeId: `${host}:8041`,
      httpAddress: `${host}:8042`,
      state: 'RUNNING',
      healthReport: '',
      lastHealthUpdate: now,
      containers: new Set(),
    });
  }
  return nodes;
}
