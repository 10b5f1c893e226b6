/** Where the console's links point, from what YARN reports; read at most every 30 s. */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { LinkReader, LinkSources, nodePageOf, webUrl } from '../../src/api/console/links';

const APP = 'application_1652313600000_0001';

function sources(over: Partial<LinkSources> = {}) {
  const calls = { application: 0, containers: 0 };
  const src: LinkSources = {
    rmAddress: () => 'http://rm1.example:8088',
    applicationId: () => APP,
    application: async () => (calls.application++, { trackingUrl: `http://rm1.example:8088/proxy/${APP}` }),
    containers: async () => (calls.containers++, [{ nodeHttpAddress: '' }, { nodeHttpAddress: 'nm7.example:8042' }]),
    ...over,
  };
  return { src, calls };
}

describe('console: links', () => {
  it('the RM, the application’s RM page, Flink’s web UI (the tracking URL), and a NodeManager’s page', async () => {
    const { src } = sources();
    assert.deepEqual(await new LinkReader(src, new FakeClock(0)).links(), {
      rm: 'http://rm1.example:8088',
      applicationId: APP,
      application: `http://rm1.example:8088/cluster/app/${APP}`,
      flink: `http://rm1.example:8088/proxy/${APP}/`,
      nodePage: { scheme: 'http', port: 8042 },
    });
  });

  it('is read again only after 30 s or for another application', async () => {
    const clock = new FakeClock(0);
    let app = APP;
    const { src, calls } = sources({ applicationId: () => app });
    const r = new LinkReader(src, clock);
    await r.links();
    clock.advance(29_000);
    await r.links();
    assert.equal(calls.application, 1);
    clock.advance(1_000);
    await r.links();
    assert.equal(calls.application, 2);
    app = 'application_1652313600000_0002';
    assert.equal((await r.links()).applicationId, app);
    assert.equal(calls.application, 3);
  });

  it('what fails or is not a web URL is left out, never a broken link', async () => {
    const { src } = sources({
      rmAddress: () => undefined,
      application: async () => ({ trackingUrl: 'javascript:alert(1)' }),
      containers: async () => Promise.reject(new Error('proxy down')),
    });
    assert.deepEqual(await new LinkReader(src, new FakeClock(0)).links(), { applicationId: APP });
    assert.equal(webUrl('/relative/path'), undefined);
    assert.equal(webUrl('https://ok.example/x'), 'https://ok.example/x');
  });

  it('a node HTTP address with or without a scheme gives the scheme and port', () => {
    assert.deepEqual(nodePageOf('nm1:8042', 'http'), { scheme: 'http', port: 8042 });
    assert.deepEqual(nodePageOf('https://nm1:8044', 'http'), { scheme: 'https', port: 8044 });
    assert.deepEqual(nodePageOf('nm1', 'https'), { scheme: 'https', port: 443 });
    assert.equal(nodePageOf('not a host:x', 'http'), undefined);
  });
});
