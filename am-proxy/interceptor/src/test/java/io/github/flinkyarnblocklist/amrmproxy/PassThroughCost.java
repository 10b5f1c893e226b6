package io.github.flinkyarnblocklist.amrmproxy;

import java.lang.reflect.Proxy;
import java.util.Collections;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterRequest;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceBlacklistRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.api.ContainerType;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.amrmproxy.AMRMProxyApplicationContextImpl;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.container.Container;
import org.apache.hadoop.yarn.util.Records;

/**
 * What the interceptor adds to an allocate of an AM that did not opt in, in process: the same
 * allocate through it and straight into the rest of the pipeline (a stand-in that answers at
 * once), alternating rounds in one JVM. Run by hand (docs/amrm-proxy.md gives the command); a
 * figure for the docs, not a test.
 */
public final class PassThroughCost {
  /** Where each answer goes, so the JIT cannot drop the calls. */
  private static volatile Object sink;

  private PassThroughCost() {}

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
    ApplicationAttemptId attempt = ApplicationAttemptId.newInstance(ApplicationId.newInstance(1652313600000L, 1), 1);
    ConcurrentMap<ContainerId, Container> containers = new ConcurrentHashMap<>();
    containers.put(ContainerId.newContainerId(attempt, 1), Interceptors.nmContainer(attempt, 1, ContainerType.APPLICATION_MASTER, false));
    Context nm = (Context) Proxy.newProxyInstance(Context.class.getClassLoader(), new Class<?>[] {Context.class},
        (p, m, a) -> m.getName().equals("getContainers") ? containers : null);
    BlocklistRequestInterceptor ours = new BlocklistRequestInterceptor();
    ours.init(new AMRMProxyApplicationContextImpl(nm, new YarnConfiguration(), attempt, "flink", null, null, null, null));
    final AllocateResponse answer = Records.newRecord(AllocateResponse.class);
    Interceptors.FakeRm rest = new Interceptors.FakeRm() {
      @Override
      public AllocateResponse allocate(AllocateRequest r) {
        return answer;
      }
    };
    ours.setNextInterceptor(rest);
    ours.registerApplicationMaster(RegisterApplicationMasterRequest.newInstance("localhost", 0, ""));
    if (!Boolean.FALSE.equals(ours.optedIn())) throw new IllegalStateException("the AM must not be opted in");
    AllocateRequest request = AllocateRequest.newInstance(1, 0.5f, Collections.emptyList(), Collections.emptyList(),
        ResourceBlacklistRequest.newInstance(Collections.singletonList("own.host"), Collections.emptyList()));
    double[] straight = new double[10];
    double[] through = new double[10];
    for (int round = 0; round < 10; round++) {
      long t0 = System.nanoTime();
      for (int i = 0; i < n; i++) sink = rest.allocate(request);
      straight[round] = (double) (System.nanoTime() - t0) / n;
      t0 = System.nanoTime();
      for (int i = 0; i < n; i++) sink = ours.allocate(request);
      through[round] = (double) (System.nanoTime() - t0) / n;
      System.out.printf("round %d: straight %.1f ns/allocate, through the interceptor (not opted in) %.1f ns/allocate%n",
          round, straight[round], through[round]);
    }
    java.util.Arrays.sort(straight, 5, 10);
    java.util.Arrays.sort(through, 5, 10);
    System.out.printf("median of the last 5 rounds: straight %.1f ns, through %.1f ns, added %.1f ns per allocate%n",
        straight[7], through[7], through[7] - straight[7]);
  }
}
