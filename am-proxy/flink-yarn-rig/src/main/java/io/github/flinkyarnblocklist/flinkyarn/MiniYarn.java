package io.github.flinkyarnblocklist.flinkyarn;

import io.github.flinkyarnblocklist.amrmproxy.BlocklistRequestInterceptor;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.api.protocolrecords.UpdateNodeResourceRequest;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.nodemanager.amrmproxy.DefaultRequestInterceptor;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;

/**
 * A real ResourceManager (MiniYARNCluster) and three real NodeManagers on distinct host names
 * (nm1/nm2/nm3.blocklist.test, 127.0.0.2-4 through the JVM's hosts file), each with the AMRMProxy
 * on the same port, as a real cluster runs it, and the blocklist interceptor in its pipeline.
 * Reads what the RM's scheduler holds; kills container processes as a failing machine would.
 */
final class MiniYarn {
  static final String[] HOSTS = {"nm1.blocklist.test", "nm2.blocklist.test", "nm3.blocklist.test"};

  private final Path work;
  private final int amrmProxyPort;
  private MiniYARNCluster cluster;
  private final NodeManager[] nms = new NodeManager[HOSTS.length];

  MiniYarn(Path work, int amrmProxyPort) {
    this.work = work;
    this.amrmProxyPort = amrmProxyPort;
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** Starts the RM and the NodeManagers, each with `nodeMb` of memory; returns once all registered. */
  void start(int nodeMb) throws Exception {
    DefaultMetricsSystem.setMiniClusterMode(true);
    YarnConfiguration base = new YarnConfiguration();
    base.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 64);
    base.set(YarnConfiguration.RM_SCHEDULER, CapacityScheduler.class.getName());
    base.setInt(YarnConfiguration.RM_AM_MAX_ATTEMPTS, 10);
    // AMs may take half the cluster (default 10 %): Flink's 1856 MB AM alone is over 10 % of three
    // nodes, and the plain AM beside it or Flink's attempt 2 then waited in ACCEPTED for good.
    base.setFloat("yarn.scheduler.capacity.maximum-am-resource-percent", 0.5f);
    base.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 200);
    base.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    base.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    base.set("hadoop.security.authentication", "simple");
    cluster = new MiniYARNCluster("blocklist-flink", 1, 0, 1, 1);
    cluster.init(base);
    cluster.start();
    ResourceManager rm = cluster.getResourceManager();
    Configuration rmConf = new Configuration(rm.getConfig());

    int blocklistPort = freePort();
    Path key = work.resolve("amrm-proxy.key");
    byte[] k = new byte[32];
    new SecureRandom().nextBytes(k);
    Files.write(key, k);
    for (int i = 0; i < HOSTS.length; i++) {
      YarnConfiguration nc = new YarnConfiguration(rmConf);
      String h = HOSTS[i];
      Path dir = work.resolve("nm" + (i + 1));
      Files.createDirectories(dir.resolve("local"));
      Files.createDirectories(dir.resolve("log"));
      nc.set(YarnConfiguration.NM_LOCAL_DIRS, dir.resolve("local").toString());
      nc.set(YarnConfiguration.NM_LOG_DIRS, dir.resolve("log").toString());
      // Each NodeManager binds its own loopback address, so the RM names it by that address's host name.
      nc.set(YarnConfiguration.NM_ADDRESS, h + ":0");
      nc.set(YarnConfiguration.NM_LOCALIZER_ADDRESS, h + ":" + freePort());
      nc.set(YarnConfiguration.NM_WEBAPP_ADDRESS, h + ":0");
      nc.set(YarnConfiguration.NM_COLLECTOR_SERVICE_ADDRESS, h + ":" + freePort());
      nc.setInt(YarnConfiguration.NM_PMEM_MB, nodeMb);
      nc.setInt(YarnConfiguration.NM_VCORES, 8);
      nc.setBoolean(YarnConfiguration.NM_CONTAINER_MONITOR_ENABLED, false);
      nc.setBoolean(YarnConfiguration.NM_ENABLE_HARDWARE_CAPABILITY_DETECTION, false);
      nc.setBoolean(YarnConfiguration.AMRM_PROXY_ENABLED, true);
      nc.set(YarnConfiguration.AMRM_PROXY_ADDRESS, h + ":" + amrmProxyPort);
      nc.set(YarnConfiguration.AMRM_PROXY_INTERCEPTOR_CLASS_PIPELINE,
          BlocklistRequestInterceptor.class.getName() + "," + DefaultRequestInterceptor.class.getName());
      nc.set(BlocklistRequestInterceptor.ADDRESS, "127.0.0.1:" + blocklistPort);
      nc.set(BlocklistRequestInterceptor.SECRET_KEY_FILE, key.toString());
      NodeManager nm = new NodeManager();
      nm.init(nc);
      nm.start();
      nms[i] = nm;
    }
    long deadline = System.currentTimeMillis() + 60_000;
    while (rm.getRMContext().getRMNodes().size() < HOSTS.length) {
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("NodeManagers did not register");
      Thread.sleep(50);
    }
  }

  int amrmProxyPort() {
    return amrmProxyPort;
  }

  /** The RM's live configuration (its addresses as bound). */
  YarnConfiguration conf() {
    return new YarnConfiguration(cluster.getResourceManager().getConfig());
  }

  int rmWebPort() {
    String a = cluster.getResourceManager().getConfig().get(YarnConfiguration.RM_WEBAPP_ADDRESS);
    return Integer.parseInt(a.substring(a.lastIndexOf(':') + 1));
  }

  /**
   * A yarn-site.xml naming the RM's addresses, as HADOOP_CONF_DIR holds it on a cluster's hosts:
   * the sidecar reads the RM web address from it, Flink's AM its RM addresses.
   */
  void writeClientSite(Path confDir) throws IOException {
    Files.createDirectories(confDir);
    Configuration site = new Configuration(false);
    Configuration rm = cluster.getResourceManager().getConfig();
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
    ResourceManager rm = cluster.getResourceManager();
    Map<NodeId, ResourceOption> m = new LinkedHashMap<>();
    for (RMNode n : rm.getRMContext().getRMNodes().values()) {
      m.put(n.getNodeID(), ResourceOption.newInstance(Resource.newInstance(mbOf.applyAsInt(n.getHostName()), 8), -1));
    }
    rm.getRMContext().getRMAdminService().updateNodeResource(UpdateNodeResourceRequest.newInstance(m));
    AbstractYarnScheduler<?, ?> s = (AbstractYarnScheduler<?, ?>) rm.getResourceScheduler();
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
    AbstractYarnScheduler<?, ?> s = (AbstractYarnScheduler<?, ?>) cluster.getResourceManager().getResourceScheduler();
    return s.getApplicationAttempt(id);
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
      m.put("running", pid(app, host, id).flatMap(ProcessHandle::of).map(ProcessHandle::isAlive).orElse(false));
      out.add(m);
    });
    return out;
  }

  /** The pid the host's NodeManager wrote for the container, once it launched it. */
  Optional<Long> pid(ApplicationId app, String host, String containerId) {
    int nm = List.of(HOSTS).indexOf(host);
    if (nm < 0) return Optional.empty();
    Path pidFile = work.resolve("nm" + (nm + 1)).resolve("local").resolve("nmPrivate").resolve(app.toString())
        .resolve(containerId).resolve(containerId + ".pid");
    try {
      return Optional.of(Long.parseLong(Files.readString(pidFile).trim()));
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
  }

  /**
   * SIGKILLs the container's process (the one the NodeManager started: the container's command
   * execs Flink's java), as a crashing machine or `kill -9` would. The NodeManager then reports
   * the container completed with exit code 137.
   */
  Map<String, Object> kill(ApplicationId app, ApplicationAttemptId attempt, String containerId) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("containerId", containerId);
    for (Map<String, Object> c : containers(app, attempt)) {
      if (!c.get("containerId").equals(containerId)) continue;
      Optional<Long> pid = pid(app, (String) c.get("host"), containerId);
      out.put("pid", pid.orElse(null));
      out.put("killed", pid.flatMap(ProcessHandle::of).map(ProcessHandle::destroyForcibly).orElse(false));
      out.put("atMs", System.currentTimeMillis());
      return out;
    }
    out.put("killed", false);
    return out;
  }
}
