/** docs/configuration.md is generated from the key registry; this keeps it from going stale. */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { configReferenceMarkdown } from '../../src/config/reference';
import { repoRoot } from '../support/paths';

describe('docs: the configuration reference', () => {
  it('docs/configuration.md lists every key as the registry defines it (regenerate: blocklist config --markdown > docs/configuration.md)', () => {
    const doc = fs.readFileSync(path.join(repoRoot, 'docs', 'configuration.md'), 'utf8');
    assert.equal(doc, configReferenceMarkdown());
  });
});
