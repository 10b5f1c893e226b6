/**
 * The node list as one string of rows, for the hop from the parsing worker to the main thread:
 * fields separated by U+0001, rows by U+0002 (control characters an RM's JSON never needs in a
 * host, rack, state or address; a health report containing one has it replaced by a space).
 */
import { ClusterNode, NodeState } from './types';

const F = '\u0001';
const R = '\u0002';
const CONTROL = /[\u0001\u0002]/g;

export function encodeNodeRows(nodes: readonly ClusterNode[]): string {
  const out: string[] = new Array<string>(nodes.length);
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    out[i] = [n.id, n.host, n.rack, n.state, String(n.numContainers), n.healthReport.replace(CONTROL, ' '), n.nodeHTTPAddress ?? ''].join(F);
  }
  return out.join(R);
}

function decodeRow(row: string): ClusterNode {
  const [id, host, rack, state, num, healthReport, http] = row.split(F);
  const n: ClusterNode = { id, host, rack, state: state as NodeState, numContainers: Number(num), healthReport };
  if (http) n.nodeHTTPAddress = http;
  return n;
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * Rows back to nodes, `slice` rows per event-loop turn, so a 10,000-node list never holds the loop
 * for more than a millisecond or two at a time.
 */
export async function decodeNodeRows(rows: string, count: number, slice = 250): Promise<ClusterNode[]> {
  if (count === 0) return [];
  const lines = rows.split(R);
  const out: ClusterNode[] = new Array<ClusterNode>(lines.length);
  for (let i = 0; i < lines.length; i++) {
    out[i] = decodeRow(lines[i]);
    if ((i + 1) % slice === 0 && i + 1 < lines.length) await turn();
  }
  return out;
}
