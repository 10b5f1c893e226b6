/**
 * A stored row is held to the rules a request is (model/validate.ts), so a row that decodes but
 * holds what the API refuses — node `*` (YARN's ANY: the RM refuses the whole update), `host:8041`,
 * an id that names another node — is quarantined like an undecodable one instead of being pushed.
 * Such rows come from older versions, hand edits, other tools.
 *
 * What a request is held to and a row is not, on purpose:
 *  - an end in the future: a stored item may have ended and wait for the expiry job;
 *  - the cause's length: merges append causes up to cause.ts's bound, beyond a request's; a cause
 *    is words for people, never pushed to YARN.
 */
import { BlockedItem, isPermanent } from '../model/item';
import { MAX_END, MAX_EVACUATION_TIMEOUT_S, parseItemRef, parseScope, parseSource } from '../model/validate';

/** What in the row breaks a request's rules; empty when nothing does. */
export function storedItemProblems(item: BlockedItem): string[] {
  const problems: string[] = [];
  const ref = parseItemRef(item.id, item.kind);
  if (!ref.ok) problems.push(...ref.errors);
  else {
    if (ref.value.node !== item.node) problems.push(`node '${item.node}' is not the node of id '${item.id}' ('${ref.value.node}')`);
    if (ref.value.containerId !== item.containerId) {
      problems.push(`containerId '${item.containerId ?? ''}' is not the container of id '${item.id}' ('${ref.value.containerId ?? ''}')`);
    }
  }
  const scope = parseScope(item.scope, problems);
  // parseScope accepts what it can tidy (blanks, repeats, `cluster` among jobs); a writer of this
  // program stores only its tidy form, and a reader compares the text.
  if (scope !== undefined && scope !== item.scope) problems.push(`scope '${item.scope}' is not written as the API writes it ('${scope}')`);
  parseSource(item.source, problems);
  if (!isPermanent(item.endTimestamp) && (item.endTimestamp <= 0 || item.endTimestamp > MAX_END)) {
    problems.push(`endTimestamp ${item.endTimestamp} is not a positive epoch in milliseconds before year 10000`);
  }
  const t = item.evacuationTimeout;
  if (t !== undefined && Math.abs(t) > MAX_EVACUATION_TIMEOUT_S) {
    problems.push(`evacuationTimeout must be seconds between -1 (forever) and ${MAX_EVACUATION_TIMEOUT_S}, got ${t}`);
  }
  return problems;
}
