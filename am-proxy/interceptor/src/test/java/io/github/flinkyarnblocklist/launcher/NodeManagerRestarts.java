package io.github.flinkyarnblocklist.launcher;

import io.github.flinkyarnblocklist.amrmproxy.BlocklistRequestInterceptor;
import io.github.flinkyarnblocklist.yarntest.LoopbackYarn;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.nodemanager.amrmproxy.AMRMProxyService;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.ContainerManagerImpl;

/**
 * The launcher's NodeManagers as tests change them: a restart with state-store recovery (stop,
 * start), what the state store holds for the AMRMProxy, and pipelines built without the interceptor.
 */
final class NodeManagerRestarts {
  private final LoopbackYarn cluster;

  NodeManagerRestarts(LoopbackYarn cluster) {
    this.cluster = cluster;
  }

  interface Step {
    void run() throws Exception;
  }

  /** Runs the step while every NodeManager builds new AMRMProxy pipelines of these classes only. */
  void withPipeline(String classes, Step step) throws Exception {
    String normal = cluster.nodeManagerConf(0).get(YarnConfiguration.AMRM_PROXY_INTERCEPTOR_CLASS_PIPELINE);
    try {
      setPipelines(classes);
      step.run();
    } finally {
      setPipelines(normal);
    }
  }

  private void setPipelines(String classes) {
    for (int i = 0; i < LoopbackYarn.HOSTS.size(); i++) {
      amrmProxy(cluster.nodeManager(i)).getConfig().set(YarnConfiguration.AMRM_PROXY_INTERCEPTOR_CLASS_PIPELINE, classes);
    }
  }

  private static AMRMProxyService amrmProxy(NodeManager nm) {
    return ((ContainerManagerImpl) nm.getNMContext().getContainerManager()).getAMRMProxyService();
  }

  /**
   * Stops a NodeManager as a restart for an upgrade does (recovery on, supervised): its containers
   * keep running and the RM keeps the node. A real NodeManager's process exits, which closes the
   * interceptors' listener; here the JVM stays, and AMRMProxyService#serviceStop stops only its RPC
   * server (it never shuts the pipelines down), so this ends each interceptor's serving.
   */
  synchronized Map<String, Object> stop(String host) throws Exception {
    int i = LoopbackYarn.hostIndex(host);
    if (i < 0 || cluster.nodeManager(i) == null) throw new IllegalArgumentException("no running NodeManager on " + host);
    NodeManager nm = cluster.nodeManager(i);
    List<String> ended = new ArrayList<>();
    AMRMProxyService proxy = amrmProxy(nm);
    java.lang.reflect.Method pipelines = AMRMProxyService.class.getDeclaredMethod("getPipelines");
    pipelines.setAccessible(true);
    for (Object wrapper : ((Map<?, ?>) pipelines.invoke(proxy)).values()) {
      Object root = ((AMRMProxyService.RequestInterceptorChainWrapper) wrapper).getRootInterceptor();
      if (root instanceof BlocklistRequestInterceptor b) {
        b.stopServing();
        ended.add(((AMRMProxyService.RequestInterceptorChainWrapper) wrapper).getApplicationAttemptId().toString());
      }
    }
    cluster.stopNodeManager(i);
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("stopped", host);
    out.put("interceptorsEnded", ended);
    return out;
  }

  /** What the running NodeManager's state store holds for the AMRMProxy: each attempt's entry keys, sorted. */
  synchronized Map<String, Object> amrmProxyStore(String host) throws Exception {
    int i = LoopbackYarn.hostIndex(host);
    NodeManager nm = i < 0 ? null : cluster.nodeManager(i);
    if (nm == null) throw new IllegalArgumentException("no running NodeManager on " + host);
    Map<String, Object> attempts = new TreeMap<>();
    nm.getNMContext().getNMStateStore().loadAMRMProxyState().getAppContexts()
        .forEach((a, entries) -> attempts.put(a.toString(), new ArrayList<>(new TreeSet<>(entries.keySet()))));
    // And the containers in the NodeManager's context (it drops a completed one once the RM has heard of its end).
    Map<String, Object> containers = new TreeMap<>();
    nm.getNMContext().getContainers().forEach((id, c) -> containers.put(id.toString(), String.valueOf(c.getContainerState())));
    return Map.of("host", host, "attempts", attempts, "containers", containers);
  }

  /** Starts the host's NodeManager again with its state store: the AMRMProxy recovers its pipelines. */
  synchronized Map<String, Object> start(String host) throws Exception {
    int i = LoopbackYarn.hostIndex(host);
    if (i < 0 || cluster.nodeManager(i) != null) throw new IllegalArgumentException("no stopped NodeManager on " + host);
    long t0 = System.currentTimeMillis();
    cluster.startNodeManager(i);
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("started", host);
    out.put("ms", System.currentTimeMillis() - t0);
    return out;
  }
}
