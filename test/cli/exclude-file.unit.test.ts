import { strict as assert } from 'node:assert';
import { ExcludeFileError, formatOf, formatText, formatYarnXml, parseExcludeFile, parseJavaInt, trimmedStrings } from '../../src/cli/exclude-file';
import { parseXml, XmlSyntaxError } from '../../src/cli/xml-document';
import { HADOOP_SAMPLE_XML } from './samples';
import { render } from '../../src/cli/commands/export';
import { planExcludeFile } from '../../src/cli/commands/import-plan';
import { ApiItem } from '../../src/cli/client';
import type { BlockAction } from '../../src/model/item';


const problemsOf = (f: () => unknown): string[] => {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof ExcludeFileError, `expected ExcludeFileError, got ${(e as Error).message}`);
    return e.problems;
  }
  assert.fail('expected an ExcludeFileError');
};

describe('cli/exclude-file (HostsFileReader formats)', () => {
  it('reads the documented XML sample: comma lists share a timeout, missing timeout = null, -1 kept', () => {
    const e = parseExcludeFile('excludes.xml', HADOOP_SAMPLE_XML);
    assert.deepEqual(
      e.map((x) => [x.host, x.timeout, x.line]),
      [['host1', null, 3], ['host2', 123, 4], ['host3', -1, 5], ['host4', 1800, 6], ['host5', 1800, 6], ['host6', 1800, 6]],
    );
  });

  it('chooses XML iff the name ends in .xml, case-insensitively', () => {
    assert.equal(formatOf('a.xml'), 'yarn-xml');
    assert.equal(formatOf('/etc/hadoop/EXCLUDES.XML'), 'yarn-xml');
    assert.equal(formatOf('excludes'), 'text');
    assert.equal(formatOf('excludes.xml.bak'), 'text');
    // An XML document in a file not named .xml is plain text to Hadoop: '<hosts>' is not a host name.
    assert.match(problemsOf(() => parseExcludeFile('excludes', HADOOP_SAMPLE_XML)).join('\n'), /line 1: .*not a host name/);
  });

  it('does not check the root element and finds <host> at any depth (but not the root itself)', () => {
    const e = parseExcludeFile('x.xml', '<whatever><group><host><name>deep</name><timeout>5</timeout></host></group></whatever>');
    assert.deepEqual(e.map((x) => [x.host, x.timeout]), [['deep', 5]]);
    assert.deepEqual(parseExcludeFile('x.xml', '<host><name>root</name></host>'), []);
  });

  it('takes the first <name>/<timeout> text (CDATA and entities included), later hosts replace earlier', () => {
    const e = parseExcludeFile('x.xml', '<r><host><name>a&#45;1,<![CDATA[b]]></name><name>ignored</name><timeout>7</timeout><timeout>9</timeout></host><host><name>a-1</name></host></r>');
    assert.deepEqual(e.map((x) => [x.host, x.timeout]), [['a-1', null], ['b', 7]]);
  });

  it('a non-integer timeout is an error naming the host and line (Integer.parseInt: no spaces, int range)', () => {
    const p = problemsOf(() => parseExcludeFile('x.xml', '<r>\n<host><name>good</name></host>\n<host><name>h7, h8</name><timeout>abc</timeout></host>\n</r>'));
    assert.equal(p.length, 1);
    assert.match(p[0], /^line 3: <timeout> of host h7, h8 is "abc"/);
    for (const bad of [' 1800', '1800 ', '', '1.5', '2147483648', '0x10']) {
      assert.equal(problemsOf(() => parseExcludeFile('x.xml', `<r><host><name>h</name><timeout>${bad}</timeout></host></r>`)).length, 1, bad);
    }
    assert.equal(parseJavaInt('+5'), 5);
    assert.equal(parseJavaInt('-2147483648'), -2147483648);
  });

  it('refuses what is not well-formed, naming the line, and DOCTYPE (Hadoop disables it)', () => {
    assert.match(problemsOf(() => parseExcludeFile('x.xml', '<hosts>\n<host><name>a</name>\n</hosts>'))[0], /line 3: <\/hosts> closes <host> opened on line 2/);
    assert.match(problemsOf(() => parseExcludeFile('x.xml', '<!DOCTYPE x [<!ENTITY e "boom">]><x/>'))[0], /DOCTYPE/);
    assert.match(problemsOf(() => parseExcludeFile('x.xml', '<a/><b/>'))[0], /second root/);
    assert.match(problemsOf(() => parseExcludeFile('x.xml', '<a>&nbsp;</a>'))[0], /unknown entity/);
    assert.match(problemsOf(() => parseExcludeFile('x.xml', ''))[0], /no root element/);
    assert.throws(() => parseXml('<a>\n\n<b x="1" x="2"/></a>'), (e: unknown) => e instanceof XmlSyntaxError && e.line === 3);
  });

  it('refuses host names YARN would not block, naming the line: ports, *, racks', () => {
    const p = problemsOf(() => parseExcludeFile('ex', 'ok1\nnode2:8041\n*  /rack1\n'));
    assert.deepEqual(p.map((x) => x.split(':')[0]), ['line 2', 'line 3', 'line 3']);
    assert.match(p[0], /has a port; use the host name 'node2'/);
  });

  it('plain text: whitespace separated, # ends the line, CR/LF/CRLF lines, BOM, duplicates once', () => {
    const e = parseExcludeFile('ex', '\uFEFFh1 h2\t# h3 h4\r\n  # all comment\rh5\n\f h6 \u000B\nh1\n');
    assert.deepEqual(e.map((x) => [x.host, x.line]), [['h1', 5], ['h2', 1], ['h5', 3], ['h6', 4]]);
    assert.match(problemsOf(() => parseExcludeFile('ex', 'a#b\n'))[0], /line 1: node id 'a#b' is not a host name/);
  });

  it('getTrimmedStrings: trims, splits on commas and newlines, drops empty names', () => {
    assert.deepEqual(trimmedStrings(' a , b,\n c ,, '), ['a', 'b', 'c']);
    assert.deepEqual(trimmedStrings('   '), []);
    assert.deepEqual(trimmedStrings(null), []);
  });

  it('round trip: what formatYarnXml / formatText write, the parser reads back the same (notes are comments)', () => {
    const entries = [
      { host: 'n1', timeout: 600, note: 'EVACUATE permanently: disk -- full-' },
      { host: 'n2', timeout: null, note: 'BLOCK until 2026-12-01T06:00:00Z: a\nb' },
      { host: 'n3', timeout: -1 },
    ];
    const xml = formatYarnXml(entries, 'header');
    assert.deepEqual(parseExcludeFile('rt.xml', xml).map((e) => [e.host, e.timeout]), [['n1', 600], ['n2', null], ['n3', -1]]);
    const text = formatText(entries, 'header');
    assert.deepEqual(parseExcludeFile('rt.txt', text).map((e) => [e.host, e.timeout]), [['n1', null], ['n2', null], ['n3', null]]);
  });

  describe('export to an exclude file and back', () => {
    const END = Date.parse('2030-01-01T00:00:00Z');
    const item = (id: string, action: BlockAction, o: Partial<ApiItem> = {}): ApiItem => ({ id, kind: 'node', action, startTimestamp: '1', endTimestamp: '9223372036854775807', cause: 'c', scope: 'cluster', ...o });
    const items = [item('n1', 'MARK_BLOCKED_AND_EVACUATE_TASKS', { endTimestamp: String(END), evacuationTimeout: 600, cause: 'disk' }), item('n2', 'MARK_BLOCKED', { cause: 'hot' }), item('n3', 'MARK_BLOCKED_AND_EVACUATE_TASKS', { scope: 'application_1652313600000_0002' })];

    it('says what each action becomes, and leaves MARK_BLOCKED out unless asked (a decommission drains every application)', () => {
      const r = render(items, 'yarn-xml', END - 1000);
      assert.deepEqual(r.markBlocked, ['n2']);
      assert.match(r.text, /every host here is DECOMMISSIONED for every application/);
      assert.match(r.text, /MARK_BLOCKED_AND_EVACUATE_TASKS -> graceful decommission, <timeout> = its evacuation timeout/);
      assert.doesNotMatch(r.text, /<name>n2<\/name>/);
      assert.match(r.text, /scope application_1652313600000_0002: a decommission covers every application/);
      const all = render(items, 'yarn-xml', END - 1000, true);
      assert.deepEqual(all.markBlocked, []);
      assert.match(all.text, /<host><name>n2<\/name><action>MARK_BLOCKED<\/action><\/host>/);
    });

    it('the end and the action survive export -> import (XML elements and text comments Hadoop ignores); Hadoop still reads the hosts and timeouts', () => {
      for (const format of ['yarn-xml', 'text'] as const) {
        const file = format === 'yarn-xml' ? 'out.xml' : 'out.txt';
        const text = render(items, format, END - 1000, true).text;
        const entries = parseExcludeFile(file, text);
        assert.deepEqual(entries.map((e) => [e.host, e.timeout]), [['n1', format === 'yarn-xml' ? 600 : null], ['n2', null], ['n3', null]], 'what HostsFileReader reads');
        assert.deepEqual(entries.map((e) => [e.end, e.action]), [[END, 'MARK_BLOCKED_AND_EVACUATE_TASKS'], [undefined, 'MARK_BLOCKED'], [undefined, 'MARK_BLOCKED_AND_EVACUATE_TASKS']], format);
        const planned = planExcludeFile(file, text, format, {}).map((p) => [p.item.id, p.item.action, p.item.endTimestamp]);
        assert.deepEqual(planned, [['n1', 'MARK_BLOCKED_AND_EVACUATE_TASKS', String(END)], ['n2', 'MARK_BLOCKED', undefined], ['n3', 'MARK_BLOCKED_AND_EVACUATE_TASKS', undefined]], `${format}: a block until 2030 comes back until 2030`);
        assert.deepEqual(planExcludeFile(file, text, format, { action: 'evacuate' }).map((p) => p.item.action)[1], 'MARK_BLOCKED_AND_EVACUATE_TASKS', '--action wins over the file');
      }
      assert.match(problemsOf(() => parseExcludeFile('x.xml', '<hosts><host><name>a</name><endTimestamp>soon</endTimestamp></host></hosts>')).join('\n'), /<endTimestamp> of host a is "soon", not epoch milliseconds/);
    });
  });
});
