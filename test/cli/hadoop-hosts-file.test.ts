/**
 * What `blocklist export` writes, read by Hadoop's own HostsFileReader (hadoop-common, as the RM's
 * NodesListManager reads yarn.resourcemanager.nodes.exclude-path): the hosts and <timeout>s are
 * what our exporter meant, and the extra <endTimestamp>/<action> elements and text comments that
 * carry a block's end for `blocklist import` change nothing for Hadoop.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { render } from '../../src/cli/commands/export';
import { ApiItem } from '../../src/cli/client';
import type { BlockAction } from '../../src/model/item';
import { parseExcludeFile } from '../../src/cli/exclude-file';
import { repoRoot } from '../support/paths';
import { requireRealYarn } from '../support/real-yarn';
import { tempDir } from '../support/sidecar';

describe("exclude files as Hadoop's HostsFileReader reads them (hadoop-common on the JVM)", function () {
  this.timeout(60_000);
  before(function () {
    requireRealYarn(this);
  });

  it('reads the hosts and timeouts of an export (XML and text) exactly as blocklist import does, and ignores what carries the end', () => {
    const END = Date.parse('2030-01-01T00:00:00Z');
    const item = (id: string, action: BlockAction, o: Partial<ApiItem> = {}): ApiItem => ({ id, kind: 'node', action, startTimestamp: '1', endTimestamp: '9223372036854775807', cause: 'disk -- full <x> & "y"', scope: 'cluster', ...o });
    const items = [
      item('n1.example', 'MARK_BLOCKED_AND_EVACUATE_TASKS', { endTimestamp: String(END), evacuationTimeout: 600 }),
      item('n2.example', 'MARK_BLOCKED'),
      item('n3.example', 'MARK_BLOCKED_AND_EVACUATE_TASKS', { evacuationTimeout: -1 }),
    ];
    const dir = tempDir('blocklist-hosts-file-');
    const xml = path.join(dir, 'excludes.xml');
    const text = path.join(dir, 'excludes');
    fs.writeFileSync(xml, render(items, 'yarn-xml', END - 1000, true).text);
    fs.writeFileSync(text, render(items, 'text', END - 1000, true).text);
    const target = path.join(repoRoot, 'am-proxy', 'interceptor', 'target');
    const cp = fs.readFileSync(path.join(target, 'test-classpath.txt'), 'utf8').trim();
    const java = spawnSync('java', ['-cp', cp, path.join(repoRoot, 'test', 'fixtures', 'java', 'HostsFileCheck.java'), xml, text], { encoding: 'utf8' });
    assert.equal(java.status, 0, java.stderr);
    const byFile = new Map<string, string[][]>();
    let current = '';
    for (const line of java.stdout.trim().split('\n')) {
      if (line.startsWith('#file ')) byFile.set((current = line.slice(6)), []);
      else if (line.startsWith('#host ')) byFile.get(current)?.push(line.slice(6).split('\t'));
    }
    const ours = (file: string) => parseExcludeFile(path.basename(file), fs.readFileSync(file, 'utf8')).map((e) => [e.host, String(e.timeout)]).sort();
    assert.deepEqual(byFile.get(xml), [['n1.example', '600'], ['n2.example', 'null'], ['n3.example', '-1']]);
    assert.deepEqual(byFile.get(xml), ours(xml));
    assert.deepEqual(byFile.get(text), [['n1.example', 'null'], ['n2.example', 'null'], ['n3.example', 'null']]);
    assert.deepEqual(byFile.get(text), ours(text));
    // And ours reads the end back, which Hadoop ignored.
    assert.equal(parseExcludeFile('excludes.xml', fs.readFileSync(xml, 'utf8'))[0].end, END);
  });
});
