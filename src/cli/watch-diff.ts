/**
 * What changed between two readings of the blocklist, for `blocklist watch`: items that appeared,
 * items gone (unblocked or ended), and for the others which of the fields an operator follows
 * moved (action, end, cause, scope, sync state). Pure; one event per item per reading.
 */
import { ApiItem } from './client';

export type WatchEvent =
  | { kind: 'added'; id: string; item: ApiItem }
  | { kind: 'changed'; id: string; item: ApiItem; changes: FieldChange[] }
  | { kind: 'removed'; id: string; before: ApiItem };

export interface FieldChange {
  field: 'action' | 'endTimestamp' | 'cause' | 'scope' | 'sync';
  from: string;
  to: string;
}

const syncOf = (it: ApiItem): string => {
  const s = it.sync;
  if (!s) return '-';
  const phase = s.evacuation?.phase;
  return phase && s.state !== 'evacuated' ? `${s.state} (${phase})` : s.state;
};

const FIELDS: { field: FieldChange['field']; of: (it: ApiItem) => string }[] = [
  { field: 'action', of: (it) => it.action },
  { field: 'endTimestamp', of: (it) => it.endTimestamp },
  { field: 'cause', of: (it) => it.cause },
  { field: 'scope', of: (it) => it.scope },
  { field: 'sync', of: syncOf },
];

/** The events that turn `before` into `after` (both: id → item), in id order. */
export function diffReadings(before: Readonly<Record<string, ApiItem>>, after: Readonly<Record<string, ApiItem>>): WatchEvent[] {
  const ids = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const out: WatchEvent[] = [];
  for (const id of ids) {
    const a = before[id];
    const b = after[id];
    if (!a && b) out.push({ kind: 'added', id, item: b });
    else if (a && !b) out.push({ kind: 'removed', id, before: a });
    else if (a && b) {
      const changes = FIELDS.map(({ field, of }) => ({ field, from: of(a), to: of(b) })).filter((c) => c.from !== c.to);
      if (changes.length) out.push({ kind: 'changed', id, item: b, changes });
    }
  }
  return out;
}
