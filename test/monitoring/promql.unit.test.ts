import { strict as assert } from 'node:assert';
import { exposedNames, metricNames } from './promql';

describe('monitoring: metric names in PromQL', () => {
  it('finds the names and nothing else (functions, aggregations, keywords, labels, durations, variables)', () => {
    assert.deepEqual(
      metricNames('histogram_quantile(0.99, sum by (le) (rate(blocklist_push_seconds_bucket{job=~"$job", x="a b"}[$__rate_interval]) * on(instance, job) group_left(application_id) info))'),
      ['blocklist_push_seconds_bucket', 'info'],
    );
    assert.deepEqual(metricNames('time() - blocklist_last_sync offset 5m > bool 30'), ['blocklist_last_sync']);
    assert.deepEqual(metricNames('a and on(instance) b or c unless ignoring(x) d'), ['a', 'b', 'c', 'd']);
    assert.deepEqual(metricNames('up{job="flink-yarn-blocklist"} == 0'), ['up']);
    assert.deepEqual(metricNames('increase(x_total[1h]) > 1e3'), ['x_total']);
    assert.deepEqual(metricNames('sum without (phase) (y)'), ['y']);
    assert.deepEqual(metricNames('a\n# only the runner of a job\nand on(instance) b{x="#1"}'), ['a', 'b']);
  });

  it('reads a histogram’s and a summary’s series names from the exposition', () => {
    const names = exposedNames('# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 0\n# TYPE s summary\n# TYPE g gauge\ng 1\n');
    assert.deepEqual([...names].sort(), ['g', 'h', 'h_bucket', 'h_count', 'h_sum', 's', 's_count', 's_sum']);
  });
});
