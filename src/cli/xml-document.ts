/**
 * A strict read of a small XML document (a YARN exclude file) with fast-xml-parser: its validator
 * for well-formedness (it names the line of a problem), its parser for the tree (with each
 * element's offset, so errors can name lines), and the few checks neither makes that XML 1.0
 * requires: one root element, only the five predefined entities and legal character references,
 * no "--" in comments, no "]]>" in text, no control characters.
 *
 * DOCTYPE is refused before anything is parsed: Hadoop reads exclude files with
 * XMLUtils.newSecureDocumentBuilderFactory, which disallows it, and refusing it up front means no
 * entity declaration (billion laughs, external entities) ever reaches a parser.
 *
 * Pure; throws XmlSyntaxError only. The tree offers what HostsFileReader uses of the DOM:
 * getElementsByTagName and getTextContent.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';

export interface XmlElement {
  name: string;
  /** 1-based line of the '<' that opens the element. */
  line: number;
  children: XmlNode[];
}
export type XmlNode = XmlElement | string;

export class XmlSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly detail: string,
  ) {
    super(`line ${line}: ${detail}`);
    this.name = 'XmlSyntaxError';
  }
}

/** XML 1.0's Char production excludes these (JS strings cannot hold the rest of what it excludes). */
const BAD_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const MAX_DEPTH = 200;

// Typed `Symbol` (the wrapper) by the library; it is a symbol.
const META = XMLParser.getMetaDataSymbol() as unknown as symbol;
const parser = new XMLParser({
  preserveOrder: true,
  captureMetaData: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  processEntities: false, // decoded below, strictly
  htmlEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  commentPropName: '#comment',
  cdataPropName: '#cdata',
  maxNestedTags: MAX_DEPTH,
});

/** One node of the parser's preserveOrder output: `{tag: children, ':@'?: attributes}` or `{'#text': s}`. */
type Ordered = Record<string, unknown> & { [META]?: { startIndex?: number } };

class Lines {
  private readonly starts: number[] = [0];
  constructor(text: string) {
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) this.starts.push(i + 1);
  }
  /** 1-based line of a character offset. */
  at(offset: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }
}

function legalChar(cp: number): boolean {
  return cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

/** Text or an attribute value with its references resolved; only what XML defines without a DTD. */
function decode(raw: string, line: number): string {
  if (raw.includes(']]>')) throw new XmlSyntaxError(line, "']]>' is not allowed in text");
  return raw.replace(/&([^;&\s]*);?/g, (whole, ref: string) => {
    if (!whole.endsWith(';')) throw new XmlSyntaxError(line, `'&' must start an entity reference like &amp; (got '${whole.slice(0, 12)}')`);
    if (ref in PREDEFINED) return PREDEFINED[ref];
    const num = /^#(?:x([0-9A-Fa-f]+)|([0-9]+))$/.exec(ref);
    if (!num) throw new XmlSyntaxError(line, `unknown entity &${ref}; (only &lt; &gt; &amp; &quot; &apos; and &#N; are defined without a DTD)`);
    const cp = num[1] !== undefined ? parseInt(num[1], 16) : parseInt(num[2], 10);
    if (!legalChar(cp)) throw new XmlSyntaxError(line, `character reference &${ref}; is not a legal XML character`);
    return String.fromCodePoint(cp);
  });
}

/** The validator's message, in the words the rest of the importer uses where it is a mismatch. */
function validatorProblem(err: { msg: string; line: number }): XmlSyntaxError {
  const m = /^Expected closing tag '([^']+)' \(opened in line (\d+)[^)]*\) instead of closing tag '([^']+)'/.exec(err.msg);
  if (m) return new XmlSyntaxError(err.line, `</${m[3]}> closes <${m[1]}> opened on line ${m[2]}`);
  if (err.msg === 'Start tag expected.') return new XmlSyntaxError(err.line, 'the document has no root element');
  return new XmlSyntaxError(err.line, err.msg.replace(/\.$/, ''));
}

function element(node: Ordered, name: string, lines: Lines, depth: number, parentLine: number): XmlElement {
  const line = lines.at(node[META]?.startIndex ?? 0) || parentLine;
  if (depth > MAX_DEPTH) throw new XmlSyntaxError(line, `elements are nested more than ${MAX_DEPTH} deep`);
  const attrs = (node[':@'] ?? {}) as Record<string, string>;
  for (const v of Object.values(attrs)) decode(String(v), line);
  return { name, line, children: nodes(node[name] as Ordered[], lines, depth + 1, line) };
}

function nodes(list: Ordered[], lines: Lines, depth: number, line: number): XmlNode[] {
  const out: XmlNode[] = [];
  for (const n of list) {
    if ('#text' in n) out.push(decode(String(n['#text']), line));
    else if ('#cdata' in n) out.push((n['#cdata'] as Ordered[]).map((t) => String(t['#text'] ?? '')).join(''));
    else if ('#comment' in n) {
      const body = (n['#comment'] as Ordered[]).map((t) => String(t['#text'] ?? '')).join('');
      if (body.includes('--') || body.endsWith('-')) throw new XmlSyntaxError(line, "'--' is not allowed inside a comment");
    } else {
      const name = Object.keys(n).find((k) => k !== ':@');
      if (name !== undefined) out.push(element(n, name, lines, depth, line));
    }
  }
  return out;
}

/** Parses a whole document and returns its root element. */
export function parseXml(text: string): XmlElement {
  // XML end-of-line handling: CR LF and lone CR become LF before anything else.
  const s = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).replace(/\r\n?/g, '\n');
  const lines = new Lines(s);
  const bad = BAD_CHAR.exec(s);
  if (bad) throw new XmlSyntaxError(lines.at(bad.index), `control character U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} is not allowed in XML`);
  const doctype = /<!DOCTYPE/i.exec(s);
  if (doctype) throw new XmlSyntaxError(lines.at(doctype.index), 'DOCTYPE is not allowed (Hadoop reads exclude files with DOCTYPE disabled)');
  const valid = XMLValidator.validate(s, { allowBooleanAttributes: false });
  if (valid !== true) throw validatorProblem(valid.err);
  let tree: Ordered[];
  try {
    tree = parser.parse(s) as Ordered[];
  } catch (e) {
    // What the validator lets through and the parser still refuses (its nesting limit, say).
    const msg = (e as Error).message;
    throw new XmlSyntaxError(1, /nested tags/i.test(msg) ? `elements are nested more than ${MAX_DEPTH} deep` : msg);
  }
  const top = nodes(tree, lines, 0, 1);
  const roots = top.filter((n): n is XmlElement => typeof n !== 'string');
  const stray = top.find((n): n is string => typeof n === 'string' && n.trim() !== '');
  if (roots.length > 1) throw new XmlSyntaxError(roots[1].line, `a second root element; the document already has <${roots[0].name}>`);
  if (stray !== undefined) throw new XmlSyntaxError(roots[0]?.line ?? 1, 'text outside the root element');
  if (!roots.length) throw new XmlSyntaxError(lines.at(s.length), 'the document has no root element');
  return roots[0];
}

/** DOM Element#getElementsByTagName: descendants (not the element itself), document order. */
export function elementsByTagName(el: XmlElement, name: string): XmlElement[] {
  const out: XmlElement[] = [];
  const walk = (e: XmlElement) => {
    for (const c of e.children) {
      if (typeof c === 'string') continue;
      if (c.name === name) out.push(c);
      walk(c);
    }
  };
  walk(el);
  return out;
}

/** DOM Node#getTextContent: all descendant text and CDATA, concatenated. */
export function textContent(el: XmlElement): string {
  return el.children.map((c) => (typeof c === 'string' ? c : textContent(c))).join('');
}
