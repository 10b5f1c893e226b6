package io.github.flinkyarnblocklist.flinkyarn;

import io.github.flinkyarnblocklist.amrmproxy.BlocklistRequestInterceptor;
import io.github.flinkyarnblocklist.yarntest.LoopbackYarn;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.api.protocolrecords.UpdateNodeResourceRequest;
import org.apache.hadoop.yarn.server.nodemanager.amrmproxy.DefaultRequestInterceptor;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;

/**
 * The rig's YARN: {@link LoopbackYarn} (a real RM and three NodeManagers on their own host names,
 * the AMRMProxy on one port) with the blocklist interceptor in each NodeManager's pipeline, and
 * what the rig reads or does there besides: node memory, the containers of Flink's attempt, kills.
 */
final class MiniYarn {
  static final List<String> HOSTS = LoopbackYarn.HOSTS;

  private final Path work;
  private final int amrmProxyPort;
  private LoopbackYarn yarn;

  MiniYarn(Path work, int amrmProxyPort) {
    this.work = work;
    this.amrmProxyPort = amrmProxyPort;
  }

  /** Starts the RM and the NodeManagers, each with `nodeMb` of memory; returns once all registered. */
  void start(int nodeMb) throws Exception {
    Path key = LoopbackYarn.writeSecretKey(work.resolve("amrm-proxy.key"));
    Map<String, String> interceptor = Map.of(
        BlocklistRequestInterceptor.ADDRESS, "127.0.0.1:" + LoopbackYarn.freePort(),
        BlocklistRequestInterceptor.SECRET_KEY_FILE, key.toString());
    yarn = new LoopbackYarn(work, new LoopbackYarn.Options("blocklist-flink", nodeMb, amrmProxyPort,
        BlocklistRequestInterceptor.class.getName() + "," + DefaultRequestInterceptor.class.getName(),
        interceptor, false, Map.of()));
    yarn.start();
  }

  int amrmProxyPort() {
    return amrmProxyPort;
  }

  /** The RM's live configuration (its addresses as bound). */
  YarnConfiguration conf() {
    return yarn.conf();
  }

  int rmWebPort() {
    return yarn.rmWebPort();
  }

  /** The application's files of this name in its containers' local dirs, on any node. */
  List<LoopbackYarn.AppFile> appFiles(ApplicationId app, String name) throws IOException {
    return yarn.appFiles(app, name);
  }

  /**
   * A yarn-site.xml naming the RM's addresses, as HADOOP_CONF_DIR holds it on a cluster's hosts:
   * the sidecar reads the RM web address from it, Flink's AM its RM addresses.
   */
  void writeClientSite(Path confDir) throws IOException {
    Files.createDirectories(confDir);
    Configuration site = new Configuration(false);
    Configuration rm = yarn.resourceManager().getConfig();
    for (String key : List.of(YarnConfiguration.RM_ADDRESS, YarnConfiguration.RM_SCHEDULER_ADDRESS,
        YarnConfiguration.RM_WEBAPP_ADDRESS, YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS)) {
      site.set(key, rm.get(key));
    }
    try (OutputStream o = Files.newOutputStream(confDir.resolve("yarn-site.xml"))) {
      site.writeXml(o);
    }
  }

  /**
   * Sets each NodeManager's memory in the RM's view (RM admin's updateNodeResource: `mbOf` of its
   * host) and waits until the scheduler holds the new sizes.
   */
  void setNodeMemory(java.util.function.ToIntFunction<String> mbOf) throws Exception {
    ResourceManager rm = yarn.resourceManager();
    Map<NodeId, ResourceOption> m = new LinkedHashMap<>();
    for (RMNode n : rm.getRMContext().getRMNodes().values()) {
      m.put(n.getNodeID(), ResourceOption.newInstance(Resource.newInstance(mbOf.applyAsInt(n.getHostName()), 8), -1));
    }
    rm.getRMContext().getRMAdminService().updateNodeResource(UpdateNodeResourceRequest.newInstance(m));
    AbstractYarnScheduler<?, ?> s = yarn.scheduler();
    long deadline = System.currentTimeMillis() + 10_000;
    for (Map.Entry<NodeId, ResourceOption> e : m.entrySet()) {
      while (!hasMemory(s.getSchedulerNode(e.getKey()), e.getValue().getResource().getMemorySize())) {
        if (System.currentTimeMillis() > deadline) throw new IllegalStateException("node resource not updated: " + e.getKey());
        Thread.sleep(20);
      }
    }
  }

  /** A node the RM knows may not have reached the scheduler yet (its NodeAddedSchedulerEvent is asynchronous): not updated. */
  private static boolean hasMemory(org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode n, long mb) {
    return n != null && n.getTotalResource().getMemorySize() == mb;
  }

  /** The memory YARN gave the attempt's AM container. */
  long amContainerMb(ApplicationAttemptId attempt) {
    return schedulerAttempt(attempt).getLiveContainers().stream().filter(c -> c.isAMContainer())
        .mapToLong(c -> c.getAllocatedResource().getMemorySize()).findFirst().orElseThrow();
  }

  SchedulerApplicationAttempt schedulerAttempt(ApplicationAttemptId id) {
    return yarn.schedulerAttempt(id);
  }

  /** The live containers the scheduler holds for the attempt: id, host, AM or not, and whether its process runs. */
  List<Map<String, Object>> containers(ApplicationId app, ApplicationAttemptId attempt) {
    List<Map<String, Object>> out = new ArrayList<>();
    SchedulerApplicationAttempt sa = schedulerAttempt(attempt);
    if (sa == null) return out;
    sa.getLiveContainers().forEach(c -> {
      Map<String, Object> m = new LinkedHashMap<>();
      String id = c.getContainerId().toString();
      String host = c.getAllocatedNode().getHost();
      m.put("containerId", id);
      m.put("host", host);
      m.put("am", c.isAMContainer());
      m.put("running", yarn.containerRuns(app, host, id));
      out.add(m);
    });
    return out;
  }

  /**
   * SIGKILLs the container's JVM (Flink's TaskManager or JobManager), as `kill -9` of it or a
   * crash would. The pid the NodeManager records is the container's launch shell (`bash -c` of
   * the start command, which forks for its redirects), Flink's java its descendant: killing the
   * shell alone made the NodeManager stop the JVM with SIGTERM, a graceful shutdown. The shell then
   * exits 137 and the NodeManager reports the container completed.
   */
  Map<String, Object> kill(ApplicationId app, ApplicationAttemptId attempt, String containerId) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("containerId", containerId);
    for (Map<String, Object> c : containers(app, attempt)) {
      if (!c.get("containerId").equals(containerId)) continue;
      Optional<ProcessHandle> shell = yarn.containerPid(app, (String) c.get("host"), containerId).flatMap(ProcessHandle::of);
      List<ProcessHandle> jvms = shell.map(s -> s.descendants().filter(MiniYarn::isJava).toList()).orElse(List.of());
      out.put("pid", jvms.isEmpty() ? shell.map(ProcessHandle::pid).orElse(null) : jvms.get(0).pid());
      boolean killed = jvms.isEmpty() ? shell.map(ProcessHandle::destroyForcibly).orElse(false)
          : jvms.stream().map(ProcessHandle::destroyForcibly).reduce(false, Boolean::logicalOr);
      out.put("killed", killed);
      out.put("atMs", System.currentTimeMillis());
      return out;
    }
    out.put("killed", false);
    return out;
  }

  private static boolean isJava(ProcessHandle p) {
    return p.info().command().map(cmd -> cmd.endsWith("/java")).orElse(false);
  }
}
