/**
 * The detector's own blocks over time, pure: notices that an automatic block expired, or that an
 * operator lifted it (its incidents are then forgiven: the host is not blocked again for them);
 * records a block made; the backoff of a host blocked again soon after its last block ended.
 */
import { BlockAction } from '../model/item';
import { AutoBlock, DetectorState, HostState } from './state';
import { spentUntil } from './incidents';

/** An item in effect now, as the store has it. */
export interface EffectiveBlock {
  itemId: string;
  by: string;
  end: number;
  action: BlockAction;
}

/**
 * Brings each host's last automatic block up to date with the store: gone after its end = expired;
 * gone before its end = an operator lifted it, and the incidents so far are forgiven. Shadow blocks
 * live only in the detector's state and just expire.
 */
export function observeBlocks(state: DetectorState, itemEnd: (itemId: string) => number | undefined, now: number): { unblockedByOperator: string[] } {
  const unblockedByOperator: string[] = [];
  for (const [host, hs] of Object.entries(state.hosts)) {
    const b = hs.lastBlock;
    if (!b || b.endedAt !== undefined) continue;
    if (b.mode === 'shadow') {
      if (now >= b.end) {
        b.endedAt = b.end;
        b.endedBy = 'expiry';
      }
      continue;
    }
    const end = itemEnd(b.itemId);
    if (end !== undefined && end > now) {
      b.end = end; // an operator may have extended it
      continue;
    }
    if (end === undefined && now < b.end) {
      b.endedAt = now;
      b.endedBy = 'operator';
      hs.countAfter = spentUntil(state, host, now);
      hs.operatorUnblockedAt = now;
      unblockedByOperator.push(host);
    } else {
      b.endedAt = Math.min(b.end, now);
      b.endedBy = 'expiry';
    }
  }
  return { unblockedByOperator };
}

/**
 * Failures on a blocked host do not count against it again: while a block is in force for this
 * job — anyone's (an operator's too), or in shadow mode our own would-be block — every incident
 * known for the host is spent. Otherwise the failures a host had under an operator's block counted
 * the moment the operator lifted it, and the detector blocked the host they had just repaired.
 * Only hosts with incidents are touched (the state does not grow with the blocklist).
 */
export function consumeWhileBlocked(state: DetectorState, blocked: Iterable<string>, mode: 'off' | 'shadow' | 'enforce', now: number): void {
  const withIncidents = new Set(state.incidents.map((i) => i.host));
  const hosts = new Set<string>();
  for (const h of blocked) if (withIncidents.has(h)) hosts.add(h);
  if (mode === 'shadow') {
    for (const [h, hs] of Object.entries(state.hosts)) {
      const b = hs.lastBlock;
      if (b?.mode === 'shadow' && b.endedAt === undefined && b.end > now && withIncidents.has(h)) hosts.add(h);
    }
  }
  for (const host of hosts) (state.hosts[host] ??= {}).countAfter = spentUntil(state, host, now);
}

/** What recordBlock needs of a planned block (decide.ts's PlannedBlock). */
export interface BlockMade {
  host: string;
  itemId: string;
  end: number;
  level: number;
}

/** Records a block the runner made (enforce) or would have made (shadow). */
export function recordBlock(state: DetectorState, planned: BlockMade, mode: 'enforce' | 'shadow', now: number): void {
  const hs: HostState = state.hosts[planned.host] ?? (state.hosts[planned.host] = {});
  hs.lastBlock = { itemId: planned.itemId, start: now, end: planned.end, level: planned.level, mode };
  hs.countAfter = spentUntil(state, planned.host, now);
}

/** Backoff: a host blocked again within as long as its last block lasted gets twice as long, up to the maximum. */
export function nextBlock(last: AutoBlock | undefined, now: number, s: { blockDurationMs: number; maxBlockDurationMs: number }): { level: number; durationMs: number } {
  let level = 0;
  if (last && last.endedAt !== undefined && now - last.endedAt <= Math.max(0, last.end - last.start)) level = last.level + 1;
  const durationMs = Math.min(s.maxBlockDurationMs, s.blockDurationMs * 2 ** Math.min(level, 30));
  // Once at the maximum, the level stops growing (it only says "how many doublings").
  while (level > 0 && s.blockDurationMs * 2 ** (level - 1) >= s.maxBlockDurationMs) level--;
  return { level, durationMs };
}
