/**
 * A small, strict XML 1.0 reader for YARN exclude files. Hand-written rather than a general
 * library because the importer needs three things those libraries do not all give: line numbers
 * on every element (errors must name the line), refusal of DOCTYPE (Hadoop parses exclude files
 * with XMLUtils.newSecureDocumentBuilderFactory, which disallows it), and the DOM's
 * getElementsByTagName / getTextContent semantics, nothing more. Pure; throws XmlSyntaxError only.
 */

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

const NAME_START = /[A-Za-z_:\u00C0-\uFFFF]/;
const NAME_CHAR = /[A-Za-z0-9_:.\-\u00B7\u00C0-\uFFFF]/;
// XML 1.0 Char production minus what JS strings cannot hold anyway: C0 controls other than TAB/LF/CR.
const BAD_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

class Reader {
  pos = 0;
  line = 1;
  constructor(readonly s: string) {}

  fail(detail: string, line = this.line): never {
    throw new XmlSyntaxError(line, detail);
  }
  eof(): boolean {
    return this.pos >= this.s.length;
  }
  startsWith(t: string): boolean {
    return this.s.startsWith(t, this.pos);
  }
  /** Moves past n characters, counting newlines (the input is already LF-normalised). */
  advance(n: number): void {
    const end = Math.min(this.pos + n, this.s.length);
    for (let i = this.pos; i < end; i++) if (this.s.charCodeAt(i) === 10) this.line++;
    this.pos = end;
  }
  skipSpace(): boolean {
    const start = this.pos;
    while (!this.eof() && /[ \t\r\n]/.test(this.s[this.pos])) this.advance(1);
    return this.pos > start;
  }
  /** Text up to (not including) `end`; fails if `end` never comes. */
  until(end: string, what: string): string {
    const i = this.s.indexOf(end, this.pos);
    if (i < 0) this.fail(`${what} is not closed (expected '${end}')`);
    const text = this.s.slice(this.pos, i);
    this.advance(i - this.pos + end.length);
    return text;
  }
  name(what: string): string {
    const start = this.pos;
    if (this.eof() || !NAME_START.test(this.s[this.pos])) this.fail(`expected ${what}`);
    while (!this.eof() && NAME_CHAR.test(this.s[this.pos])) this.pos++;
    return this.s.slice(start, this.pos);
  }
}

function decodeText(raw: string, r: Reader, line: number): string {
  if (raw.includes(']]>')) r.fail("']]>' is not allowed in text", line);
  if (raw.includes('<')) r.fail("'<' is not allowed here", line);
  return raw.replace(/&([^;&\s]*);?/g, (whole, ref: string) => {
    if (!whole.endsWith(';')) r.fail(`'&' must start an entity reference like &amp; (got '${whole.slice(0, 12)}')`, line);
    if (ref in PREDEFINED) return PREDEFINED[ref];
    const num = /^#(?:x([0-9A-Fa-f]+)|([0-9]+))$/.exec(ref);
    if (num) {
      const cp = num[1] !== undefined ? parseInt(num[1], 16) : parseInt(num[2], 10);
      const ok = cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
      if (!ok) r.fail(`character reference &${ref}; is not a legal XML character`, line);
      return String.fromCodePoint(cp);
    }
    return r.fail(`unknown entity &${ref}; (only &lt; &gt; &amp; &quot; &apos; and &#N; are defined without a DTD)`, line);
  });
}

/** Comments, processing instructions and whitespace, between markup. Returns true if it consumed any. */
function misc(r: Reader): boolean {
  if (r.startsWith('<!--')) {
    const line = r.line;
    r.advance(4);
    const body = r.until('-->', `comment opened on line ${line}`);
    if (body.includes('--') || body.endsWith('-')) r.fail("'--' is not allowed inside a comment", line);
    return true;
  }
  if (r.startsWith('<?')) {
    const line = r.line;
    r.advance(2);
    const target = r.name('a processing instruction target');
    if (target.toLowerCase() === 'xml') r.fail("the XML declaration '<?xml …?>' must come first in the file", line);
    r.until('?>', `processing instruction opened on line ${line}`);
    return true;
  }
  return r.skipSpace();
}

function element(r: Reader, depth: number): XmlElement {
  if (depth > 200) r.fail('elements are nested more than 200 deep');
  const line = r.line;
  r.advance(1); // '<'
  const name = r.name('an element name after <');
  const seen = new Set<string>();
  for (;;) {
    const spaced = r.skipSpace();
    if (r.startsWith('/>')) {
      r.advance(2);
      return { name, line, children: [] };
    }
    if (r.startsWith('>')) {
      r.advance(1);
      break;
    }
    if (!spaced) r.fail(`expected whitespace, '>' or '/>' in <${name}>`);
    const attr = r.name(`an attribute name or '>' in <${name}>`);
    if (seen.has(attr)) r.fail(`attribute '${attr}' appears twice in <${name}>`);
    seen.add(attr);
    r.skipSpace();
    if (!r.startsWith('=')) r.fail(`attribute '${attr}' in <${name}> needs ="value"`);
    r.advance(1);
    r.skipSpace();
    const q = r.s[r.pos];
    if (q !== '"' && q !== "'") r.fail(`attribute '${attr}' in <${name}> needs a quoted value`);
    r.advance(1);
    const aline = r.line;
    const value = r.until(q, `attribute '${attr}'`);
    decodeText(value, r, aline);
  }
  const children: XmlNode[] = [];
  for (;;) {
    if (r.eof()) r.fail(`<${name}> opened on line ${line} is never closed`);
    if (r.startsWith('</')) {
      const cline = r.line;
      r.advance(2);
      const close = r.name('an element name after </');
      r.skipSpace();
      if (!r.startsWith('>')) r.fail(`expected '>' to end </${close}>`);
      r.advance(1);
      if (close !== name) r.fail(`</${close}> closes <${name}> opened on line ${line}`, cline);
      return { name, line, children };
    }
    if (r.startsWith('<![CDATA[')) {
      const cline = r.line;
      r.advance(9);
      children.push(r.until(']]>', `CDATA section opened on line ${cline}`));
      continue;
    }
    if (r.startsWith('<!--') || r.startsWith('<?')) {
      misc(r);
      continue;
    }
    if (r.startsWith('<!')) r.fail(`unexpected '<!' inside <${name}>`);
    if (r.startsWith('<')) {
      children.push(element(r, depth + 1));
      continue;
    }
    const tline = r.line;
    const next = r.s.indexOf('<', r.pos);
    const raw = r.s.slice(r.pos, next < 0 ? r.s.length : next);
    r.advance(raw.length);
    children.push(decodeText(raw, r, tline));
  }
}

/** Parses a whole document and returns its root element. */
export function parseXml(text: string): XmlElement {
  // XML end-of-line handling (§2.11): CR LF and lone CR become LF before anything else.
  const s = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).replace(/\r\n?/g, '\n');
  const bad = BAD_CHAR.exec(s);
  if (bad) {
    const line = s.slice(0, bad.index).split('\n').length;
    throw new XmlSyntaxError(line, `control character U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} is not allowed in XML`);
  }
  const r = new Reader(s);
  if (r.startsWith('<?xml') && /[\s?]/.test(s[5] ?? '')) {
    r.advance(5);
    r.until('?>', 'the XML declaration');
  }
  let root: XmlElement | undefined;
  for (;;) {
    if (misc(r)) continue;
    if (r.eof()) break;
    if (r.startsWith('<!DOCTYPE') || r.startsWith('<!doctype')) {
      r.fail('DOCTYPE is not allowed (Hadoop reads exclude files with DOCTYPE disabled)');
    }
    if (r.startsWith('<') && !r.startsWith('</') && !r.startsWith('<!')) {
      if (root) r.fail(`a second root element; the document already has <${root.name}>`);
      root = element(r, 0);
      continue;
    }
    r.fail(root ? `unexpected content after </${root.name}>` : 'expected the root element');
  }
  if (!root) throw new XmlSyntaxError(r.line, 'the document has no root element');
  return root;
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
