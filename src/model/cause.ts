/**
 * Causes of merged blocks. FLIP-224 joins the causes of merged blocks with ','; a token is one
 * comma-separated part, trimmed. The rules:
 *  - the stored text is never rewritten: new tokens are appended after it, so "No space left on
 *    device, /data1 full" stays byte-identical however often it is merged again;
 *  - a token the item already holds adds nothing (compared trimmed, token by token);
 *  - the merged cause is bounded: what no longer fits is counted in a last token `…(+N more)`
 *    (the audit log keeps every request's own cause).
 */

/** Most characters a merged cause holds. */
export const MERGED_CAUSE_MAX = 4096;

const SUMMARY_RE = /^…\(\+(\d+) more\)$/;
/** Room kept for the summary token: `,…(+` + up to 10 digits + ` more)`. */
const SUMMARY_ROOM = 22;

const summary = (n: number): string => `…(+${n} more)`;

/** The tokens of a cause: comma-separated, trimmed, empty ones left out. */
export function causeTokens(cause: string): string[] {
  const out: string[] = [];
  for (const part of cause.split(',')) {
    const t = part.trim();
    if (t) out.push(t);
  }
  return out;
}

/** Splits a stored cause into the text before its summary token and the count that token holds. */
function parseStored(cause: string): { body: string; more: number } {
  const comma = cause.lastIndexOf(',');
  const m = SUMMARY_RE.exec(cause.slice(comma + 1).trim());
  if (!m) return { body: cause, more: 0 };
  return { body: comma < 0 ? '' : cause.slice(0, comma), more: Number(m[1]) };
}

/**
 * `stored` with the tokens of `incoming` it does not hold yet appended (first-seen order).
 * Returns `stored` itself when nothing is new. The result may have no token at all (both empty):
 * the caller refuses that.
 */
export function mergeCauses(stored: string, incoming: string): string {
  const { body: storedBody, more: storedMore } = parseStored(stored);
  const held = new Set(causeTokens(storedBody));
  const fresh: string[] = [];
  for (const t of causeTokens(incoming)) {
    if (!held.has(t) && !SUMMARY_RE.test(t)) {
      held.add(t);
      fresh.push(t);
    }
  }
  if (fresh.length === 0) return stored;
  // A stored cause with no token (",") or over the bound (written before there was one) starts
  // over from its tokens; otherwise its text is kept as it is.
  let body = storedBody;
  let more = storedMore;
  let pending = fresh;
  if (causeTokens(body).length === 0) body = '';
  else if (body.length > MERGED_CAUSE_MAX - SUMMARY_ROOM) {
    pending = [...causeTokens(body), ...fresh];
    body = '';
  }
  const all = joinTokens(body, pending);
  // Room for a summary is always left, so a full cause later gets one without dropping stored text.
  if (more === 0 && all.length <= MERGED_CAUSE_MAX - SUMMARY_ROOM) return all;
  // Over the bound, or already full: fit what still fits, count the rest.
  if (more > 0) return joinTokens(body, [summary(more + pending.length)]);
  let out = body;
  let i = 0;
  for (; i < pending.length; i++) {
    const next = joinTokens(out, [pending[i]]);
    if (next.length > MERGED_CAUSE_MAX - SUMMARY_ROOM) break;
    out = next;
  }
  more += pending.length - i;
  return joinTokens(out, [summary(more)]);
}

function joinTokens(body: string, tokens: string[]): string {
  if (tokens.length === 0) return body;
  return body ? `${body},${tokens.join(',')}` : tokens.join(',');
}
