/**
 * Property-based tests of the YARN exclude-file parser (src/cli/exclude-file.ts), which reads files
 * operators hand to `blocklist import`: arbitrary text never crashes it (only ExcludeFileError),
 * whatever it returns is a valid host with an int timeout, and what the exporter writes reads back
 * the same, whatever notes and headers are written with it.
 */
import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { ExcludeFileError, ExportEntry, formatText, formatYarnXml, parseExcludeFile } from '../../src/cli/exclude-file';
import { validateHostName } from '../../src/model/ids';
import { parseCause } from '../../src/model/validate';
import { validHost } from './arbitraries';
import { count, printFigures } from './figures';

function parseOrRefuse(file: string, text: string): ReturnType<typeof parseExcludeFile> | 'refused' {
  try {
    return parseExcludeFile(file, text);
  } catch (e) {
    assert.ok(e instanceof ExcludeFileError, `${file}: ${String(e)} for ${JSON.stringify(text.slice(0, 200))}`);
    assert.ok(e.problems.length > 0);
    return 'refused';
  } finally {
    count('exclude files fuzzed');
  }
}

const xmlish = fc
  .array(
    fc.oneof(
      fc.constantFrom('<hosts>', '</hosts>', '<host>', '</host>', '<name>', '</name>', '<timeout>', '</timeout>', '<?xml version="1.0"?>', '<!-- c -->', '<![CDATA[x]]>', '&amp;', '&lt;', '&#65;', '&#xZZ;', '&bogus;', '<!DOCTYPE hosts [<!ENTITY x "y">]>', '<a b="c">', '</a>', ',', '\n', ' '),
      validHost,
      fc.string({ maxLength: 8 }),
      fc.integer({ min: -5, max: 99999 }).map(String),
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));

/** Export notes carry item causes: anything the API accepts as a cause (any Unicode but control characters). */
const causeText = fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), fc.string({ unit: fc.constantFrom('a', ' ', '-', '>', '<', '&', '#', '\uFFFE', '\uFFFF', '\uD800', '\u2028', '\u0085'), maxLength: 12 })).filter((c) => parseCause(c, []) !== undefined);

const entries = fc.uniqueArray(
  fc.record({ host: validHost, timeout: fc.oneof(fc.constant(null), fc.integer({ min: -1, max: 2 ** 31 - 1 })), note: fc.option(causeText, { nil: undefined }) }),
  { selector: (e) => e.host, maxLength: 12 },
);

describe('fuzz: exclude-file parser (fast-check)', function () {
  this.timeout(30_000);
  after(() => printFigures('exclude-file fuzz', ['exclude files fuzzed']));

  it('arbitrary text (plain or XML): an ExcludeFileError or valid hosts with int timeouts, nothing else', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 80 }), xmlish), fc.constantFrom('exclude.txt', 'exclude.xml', 'EXCLUDE.XML', 'hosts'), (text, file) => {
        const out = parseOrRefuse(file, text);
        if (out === 'refused') return;
        const seen = new Set<string>();
        for (const e of out) {
          assert.ok(validateHostName(e.host).ok, e.host);
          assert.ok(!seen.has(e.host), `duplicate ${e.host}`);
          seen.add(e.host);
          assert.ok(e.timeout === null || (Number.isInteger(e.timeout) && e.timeout >= -(2 ** 31) && e.timeout < 2 ** 31));
          assert.ok(Number.isInteger(e.line) && e.line >= 1);
        }
      }),
      { numRuns: 600, seed: 0xe0f },
    );
  });

  // Found by this test: a cause holding U+FFFE or U+FFFF (accepted by the API) made the exported
  // XML unreadable, to the importer and to Hadoop alike.
  it('what the exporter writes reads back the same (XML keeps timeouts, text keeps hosts), whatever causes the notes carry', () => {
    fc.assert(
      fc.property(entries, fc.option(causeText, { nil: undefined }), (es: ExportEntry[], header) => {
        const xml = parseOrRefuse('out.xml', formatYarnXml(es, header));
        assert.notEqual(xml, 'refused', formatYarnXml(es, header));
        assert.deepEqual(
          (xml as ReturnType<typeof parseExcludeFile>).map((e) => [e.host, e.timeout]),
          es.map((e) => [e.host, e.timeout]),
        );
        const text = parseOrRefuse('out.txt', formatText(es, header));
        assert.notEqual(text, 'refused', formatText(es, header));
        assert.deepEqual(
          (text as ReturnType<typeof parseExcludeFile>).map((e) => e.host),
          es.map((e) => e.host),
        );
      }),
      { numRuns: 300, seed: 0xe10 },
    );
  });
});
