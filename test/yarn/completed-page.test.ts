/**
 * One unreadable completed-container entry (a proxy that could not place the container on a node
 * sends an empty nodeId) is left out and reported; the rest of the page and the cursor still count,
 * so the detector's YARN source never stalls behind it.
 */
import { strict as assert } from 'node:assert';
import { AmrmProxyClient } from '../../src/yarn/amrm-client';
import { startFixtureServer } from './fixture-server';

describe('AMRM client: completed containers, one bad entry', () => {
  it('keeps the good entries and the cursor, and names what it left out', async () => {
    const body = JSON.stringify({
      containers: [
        { seq: 4, containerId: 'container_1652313600000_0001_01_000004', nodeId: 'node1:8041', exitStatus: 1, diagnostics: 'Exception', finishedAt: 1652313600500 },
        { seq: 5, containerId: 'container_1652313600000_0001_01_000001', nodeId: '', exitStatus: -100, diagnostics: '', finishedAt: 1652313600600 },
        { seq: 6, containerId: 'container_1652313600000_0001_01_000006', nodeId: 'node2:8041', exitStatus: 137, diagnostics: 'Killed', finishedAt: 1652313600700 },
      ],
      next: 6,
    });
    const srv = await startFixtureServer({ '/amrm/v1/completed-containers': { body } });
    try {
      const page = await new AmrmProxyClient({ address: srv.url }).completedContainers(3);
      assert.deepEqual(page.containers.map((c) => c.seq), [4, 6]);
      assert.equal(page.next, 6);
      assert.equal(page.skipped?.length, 1);
      assert.match(page.skipped?.[0] ?? '', /completed-containers\[1\]\.nodeId/);
    } finally {
      await srv.close();
    }
  });
});
