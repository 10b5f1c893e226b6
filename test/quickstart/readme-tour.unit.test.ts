/**
 * The README's tour runs against `npm start`'s simulated cluster (12 nodes, 16 task managers,
 * seed 7): the task manager its batch example blocks must be one that runs on the node it names,
 * or the example shows a block that does nothing (answered with a warning since).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SimCluster } from '../../src/sim/cluster';
import { repoRoot } from '../support/paths';

describe("README tour: its examples name what npm start's cluster runs", () => {
  it('the batch example\'s task manager runs on the node it names', () => {
    const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    const ids = [...readme.matchAll(/"id":"(node\d+\.sim\.local)\/(container_[0-9_]+)"/g)];
    assert.ok(ids.length > 0, 'the tour has a task manager example');
    const cluster = new SimCluster({ nodes: 12, containers: 16, seed: 7 });
    for (const [, node, container] of ids) assert.equal(cluster.container(container)?.host, node, `${node}/${container}`);
  });
});
