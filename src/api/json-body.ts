/**
 * The API's JSON body parser, lossless for big numbers. JSON.parse turns 9223372036854775807 into
 * 9223372036854775808 and 1e300 into a number a check cannot tell from Long.MAX_VALUE, so a
 * request's meaning would be decided from a rounded value. Here every number literal that a JS
 * number cannot hold exactly (an integer beyond 2^53, or any literal of that magnitude) is handed
 * to the handlers as its literal text, a JSON string after a mark (NUMBER_TEXT_MARK: a text field
 * refuses it as not a string); model/validate.ts then decides from the text the client sent: exactly 9223372036854775807 is permanent, anything else beyond 2^53 is a 400.
 * Everything else (syntax errors, prototype-poisoning protection, the body limit) stays fastify's
 * own parser.
 */
import { FastifyInstance } from 'fastify';
import { NUMBER_TEXT_MARK } from '../model/validate';

const NUMBER_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;
const MAYBE_INEXACT = /\d{16}|\d[eE]/;

/** Whether a number literal survives JSON.parse exactly. */
function exact(literal: string): boolean {
  const n = Number(literal);
  if (/^-?\d+$/.test(literal)) return Number.isSafeInteger(n);
  return Math.abs(n) < 2 ** 53;
}

/**
 * The JSON text with each inexact number literal outside strings written as a string of its own
 * text. Returns the input itself when there is none (the common case costs one scan).
 */
export function quoteInexactNumbers(text: string): string {
  // Only a literal of 16 or more digits or one with an exponent can be inexact: a text with
  // neither (nearly every body) needs no scan character by character (1 MB: ~40 ms on the loop).
  if (!MAYBE_INEXACT.test(text)) return text;
  let out: string[] | undefined;
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      NUMBER_RE.lastIndex = i;
      const m = NUMBER_RE.exec(text);
      if (!m) continue; // not a number: JSON.parse will say where
      const literal = m[0];
      if (!exact(literal)) {
        out ??= [];
        out.push(text.slice(from, i), JSON.stringify(NUMBER_TEXT_MARK + literal));
        from = i + literal.length;
      }
      i += literal.length - 1;
    }
  }
  if (!out) return text;
  out.push(text.slice(from));
  return out.join('');
}

/** Installs the parser for application/json (and +json types fastify sends to it). */
export function installLosslessJson(app: FastifyInstance): void {
  const standard = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    standard(req, quoteInexactNumbers(body as string), done);
  });
}
