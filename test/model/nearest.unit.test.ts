import { strict as assert } from 'node:assert';
import { editDistance, nearestHosts } from '../../src/model/nearest';

describe('model/nearest: names the RM knows near an unknown host', () => {
  const known = ['node0001', 'node0002', 'node0010', 'gpu-7.example.com', 'other'];
  it('the wrong case first, then short/long DNS forms, then small edit distances', () => {
    assert.deepEqual(nearestHosts('Node0001', known), ['node0001', 'node0002', 'node0010']);
    assert.deepEqual(nearestHosts('gpu-7', known), ['gpu-7.example.com']);
    assert.deepEqual(nearestHosts('node001', known, 2), ['node0001', 'node0010']);
  });
  it('nothing for a name far from every known one, or for a known one', () => {
    assert.deepEqual(nearestHosts('completely-different-host', known), []);
    assert.deepEqual(nearestHosts('node0002', known), []);
  });
  it('edit distance stops early past the bound', () => {
    assert.equal(editDistance('kitten', 'sitting', 5), 3);
    assert.equal(editDistance('a', 'abcdef', 2), 3);
    assert.equal(editDistance('abcdef', 'uvwxyz', 2), 3);
  });
});
