/**
 * YARN exclude files, read exactly as Hadoop's HostsFileReader reads them, and written so Hadoop
 * reads them back (HostsFileReader: one host per whitespace-separated word, '#' starts a comment;
 * the XML form is <hosts><host><name>…</name><timeout>…</timeout></host></hosts>). Pure: text in, entries or an
 * ExcludeFileError out; no I/O, no clock. The importer and the fuzz tests both use this module.
 *
 * Format choice: XML iff the file name ends in ".xml", case-insensitively (HostsFileReader checks
 * `filename.toLowerCase().endsWith(".xml")`); everything else is plain text. `.json` is ours
 * (`blocklist export --format json`), never Hadoop's, and is handled by the importer, not here.
 */
import { validateHostName } from '../model/ids';
import { parseXml, elementsByTagName, textContent, XmlElement, XmlSyntaxError } from './xml-document';

export type ExcludeFormat = 'yarn-xml' | 'text';

export interface ExcludeEntry {
  host: string;
  /**
   * Seconds, from the host's <timeout>; null = none given (the -g value or the config default
   * applies, as in NodesListManager). Negative = wait forever (kept as written: -1).
   */
  timeout: number | null;
  /** 1-based line where the host was named (the <host> element's line for XML). */
  line: number;
  /**
   * What `blocklist export` carried beside the host, where Hadoop does not look (XML: the
   * <endTimestamp> and <action> elements; text: its own comment): the block's end (epoch ms,
   * absent = permanent) and action. Absent from files Hadoop's tools wrote.
   */
  end?: number;
  action?: string;
}

export class ExcludeFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file}: ${problems.join('; ')}`);
    this.name = 'ExcludeFileError';
  }
}

/** HostsFileReader's rule for picking the parser. */
export function formatOf(fileName: string): ExcludeFormat {
  return fileName.toLowerCase().endsWith('.xml') ? 'yarn-xml' : 'text';
}

/** java.lang.String#trim: strips every char <= U+0020 from both ends (not just whitespace). */
function javaTrim(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s.charCodeAt(a) <= 0x20) a++;
  while (b > a && s.charCodeAt(b - 1) <= 0x20) b--;
  return s.slice(a, b);
}

/**
 * StringUtils#getTrimmedStrings: trim, then split on commas or newlines with surrounding
 * whitespace. Java's split drops trailing empty strings; an empty middle token ("a,,b") would be
 * put in Hadoop's map as "" and match no node, so it is dropped here too.
 */
export function trimmedStrings(s: string | null): string[] {
  if (s === null || javaTrim(s) === '') return [];
  return javaTrim(s)
    .split(/[ \t\n\u000B\f\r]*[,\n][ \t\n\u000B\f\r]*/)
    .filter((t) => t !== '');
}

/**
 * Integer#parseInt, ASCII digits: optional sign, digits, nothing else (no surrounding spaces:
 * Hadoop does not trim <timeout>, so " 1800" fails there and fails here), int range.
 */
export function parseJavaInt(s: string): number | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = Number(s);
  return n >= -2147483648 && n <= 2147483647 ? n : undefined;
}

function checkHost(host: string, line: number, problems: string[]): boolean {
  const v = validateHostName(host);
  if (!v.ok) problems.push(`line ${line}: ${v.error}`);
  return v.ok;
}

/** Later entries for the same host replace earlier ones (Hadoop's map.put), in first-seen order. */
function upsert(out: Map<string, ExcludeEntry>, e: ExcludeEntry): void {
  out.set(e.host, e); // Map#set keeps a key's first position
}

function parseXmlEntries(file: string, text: string): ExcludeEntry[] {
  let root: XmlElement;
  try {
    root = parseXml(text);
  } catch (e) {
    if (e instanceof XmlSyntaxError) throw new ExcludeFileError(file, [`not well-formed XML: ${e.message}`]);
    throw e;
  }
  const problems: string[] = [];
  const out = new Map<string, ExcludeEntry>();
  // Element#getElementsByTagName on the document element: <host> anywhere below the root, the
  // root's own name unchecked (and a root that is itself <host> not counted, as in Hadoop).
  for (const hostEl of elementsByTagName(root, 'host')) {
    const nameEl = elementsByTagName(hostEl, 'name')[0];
    const hosts = trimmedStrings(nameEl ? textContent(nameEl) : null);
    const timeoutEl = elementsByTagName(hostEl, 'timeout')[0];
    let timeout: number | null = null;
    const label = hosts.length ? hosts.join(', ') : '(no <name>)';
    if (timeoutEl) {
      const raw = textContent(timeoutEl);
      const n = parseJavaInt(raw);
      if (n === undefined) {
        problems.push(`line ${hostEl.line}: <timeout> of host ${label} is ${JSON.stringify(raw)}, not a whole number of seconds (Hadoop fails the refresh with NumberFormatException)`);
        continue;
      }
      timeout = n;
    }
    const extra = exportedFields(hostEl, label, problems);
    if (extra === undefined) continue;
    for (const host of hosts) if (checkHost(host, hostEl.line, problems)) upsert(out, { host, timeout, line: hostEl.line, ...extra });
  }
  if (problems.length) throw new ExcludeFileError(file, problems);
  return [...out.values()];
}

/** The elements `blocklist export` adds to a <host> (Hadoop reads only <name> and <timeout>); undefined when one is unreadable. */
function exportedFields(hostEl: XmlElement, label: string, problems: string[]): Pick<ExcludeEntry, 'end' | 'action'> | undefined {
  const out: Pick<ExcludeEntry, 'end' | 'action'> = {};
  const endEl = elementsByTagName(hostEl, 'endTimestamp')[0];
  if (endEl) {
    const raw = textContent(endEl).trim();
    if (!/^\d{1,16}$/.test(raw)) {
      problems.push(`line ${hostEl.line}: <endTimestamp> of host ${label} is ${JSON.stringify(raw)}, not epoch milliseconds (blocklist export writes it; leave it out for a permanent block)`);
      return undefined;
    }
    out.end = Number(raw);
  }
  const actionEl = elementsByTagName(hostEl, 'action')[0];
  if (actionEl) out.action = textContent(actionEl).trim();
  return out;
}

/** The note `blocklist export` writes after a text file's host: "EVACUATE until 2030-01-01T00:00:00.000Z: cause". */
const TEXT_NOTE = /^#\s*(BLOCK|EVACUATE) (?:until (\d{4}-\d{2}-\d{2}T[\d:.]+Z)|permanently):/;

function parseTextEntries(file: string, text: string): ExcludeEntry[] {
  const problems: string[] = [];
  const out = new Map<string, ExcludeEntry>();
  const s = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  // BufferedReader#readLine: a line ends at LF, CR, or CR LF.
  const lines = s.split(/\r\n|\r|\n/);
  lines.forEach((lineText, i) => {
    const hosts: string[] = [];
    for (const raw of lineText.split(/[ \t\n\f\r]+/)) {
      const tok = javaTrim(raw);
      if (tok.startsWith('#')) break; // the rest of the line is a comment
      if (tok === '') continue;
      if (checkHost(tok, i + 1, problems)) hosts.push(tok);
    }
    // Our own export's note for a lone host: its end and action, which Hadoop reads as a comment.
    const hash = lineText.indexOf('#');
    const m = hosts.length === 1 && hash >= 0 ? TEXT_NOTE.exec(lineText.slice(hash)) : null;
    const extra: Pick<ExcludeEntry, 'end' | 'action'> = m ? { action: m[1] === 'BLOCK' ? 'MARK_BLOCKED' : 'MARK_BLOCKED_AND_EVACUATE_TASKS', ...(m[2] ? { end: Date.parse(m[2]) } : {}) } : {};
    for (const host of hosts) upsert(out, { host, timeout: null, line: i + 1, ...extra });
  });
  if (problems.length) throw new ExcludeFileError(file, problems);
  return [...out.values()];
}

/** Reads an exclude file's text; `format` defaults to Hadoop's choice by file name. */
export function parseExcludeFile(file: string, text: string, format: ExcludeFormat = formatOf(file)): ExcludeEntry[] {
  return format === 'yarn-xml' ? parseXmlEntries(file, text) : parseTextEntries(file, text);
}

export interface ExportEntry {
  host: string;
  timeout: number | null;
  /** The block's end, epoch ms (absent = permanent): XML <endTimestamp>, which Hadoop does not read. */
  end?: number;
  /** The block's action: XML <action>, which Hadoop does not read. */
  action?: string;
  /** Written as a comment for people; Hadoop ignores it (our importer reads its end and action back from a text file). */
  note?: string;
}

const xmlEscape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/**
 * A comment may not contain "--" nor end in "-", nor hold a character XML 1.0 forbids everywhere
 * (a cause may carry U+FFFE/U+FFFF; written raw they make the file unreadable to Hadoop and to us).
 */
const xmlComment = (s: string): string =>
  s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '\uFFFD').replace(/-(?=-)/g, '- ').replace(/-$/, '- ');
/** A text-file comment runs to the end of the line, so the note must stay on one line. */
const oneLine = (s: string): string => s.replace(/[\r\n\f]+/g, ' ');

const headerLines = (h: string | readonly string[] | undefined): readonly string[] => (h === undefined ? [] : typeof h === 'string' ? [h] : h);

/** The documented HostsFileReader XML shape; one <host> per node so every timeout survives. */
export function formatYarnXml(entries: ExportEntry[], header?: string | readonly string[]): string {
  const lines = ['<?xml version="1.0"?>'];
  for (const h of headerLines(header)) lines.push(`<!-- ${xmlComment(oneLine(h))} -->`);
  lines.push('<hosts>');
  for (const e of entries) {
    if (e.note) lines.push(`  <!-- ${xmlComment(oneLine(e.note))} -->`);
    const t = e.timeout === null ? '' : `<timeout>${e.timeout}</timeout>`;
    const end = e.end === undefined ? '' : `<endTimestamp>${e.end}</endTimestamp>`;
    const action = e.action === undefined ? '' : `<action>${xmlEscape(e.action)}</action>`;
    lines.push(`  <host><name>${xmlEscape(e.host)}</name>${t}${end}${action}</host>`);
  }
  lines.push('</hosts>', '');
  return lines.join('\n');
}

/** Plain text: one host per line; timeouts cannot be expressed, notes go after '#'. */
export function formatText(entries: ExportEntry[], header?: string | readonly string[]): string {
  const lines: string[] = [];
  for (const h of headerLines(header)) lines.push(`# ${oneLine(h)}`);
  for (const e of entries) lines.push(e.note ? `${e.host}  # ${oneLine(e.note)}` : e.host);
  lines.push('');
  return lines.join('\n');
}
