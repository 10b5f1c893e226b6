package io.github.flinkyarnblocklist.yarntest;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;

/**
 * A real ResourceManager (MiniYARNCluster) and three real NodeManagers on distinct host names
 * (nm1/nm2/nm3.blocklist.test, 127.0.0.2-4 through the JVM's hosts file: -Djdk.net.hosts.file=…),
 * each with the AMRMProxy on the same port, as a real cluster runs it, and the caller's interceptor
 * pipeline. Each NodeManager's directories are {@code <work>/nmN/{local,log,recovery}}.
 */
public final class LoopbackYarn {
  public static final List<String> HOSTS = List.of("nm1.blocklist.test", "nm2.blocklist.test", "nm3.blocklist.test");

  /**
   * What differs between users. {@code interceptorConf}: keys every NodeManager gets for its
   * interceptors; {@code recovery}: work-preserving NodeManager restart; {@code extraConf}: keys set
   * on the RM's configuration after these (the NodeManagers copy it).
   */
  public record Options(String clusterName, int nodeMb, int amrmProxyPort, String pipeline,
      Map<String, String> interceptorConf, boolean recovery, Map<String, String> extraConf) {}

  private final Path work;
  private final Options options;
  private MiniYARNCluster cluster;
  /** The running NodeManager of each host (null while stopped) and the configuration it (re)starts with. */
  private final NodeManager[] nms = new NodeManager[HOSTS.size()];
  private final YarnConfiguration[] nmConfs = new YarnConfiguration[HOSTS.size()];

  public LoopbackYarn(Path work, Options options) {
    this.work = work;
    this.options = options;
  }

  public static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** A fresh 32-byte secret in the file (the interceptor's key file). */
  public static Path writeSecretKey(Path file) throws IOException {
    byte[] k = new byte[32];
    new SecureRandom().nextBytes(k);
    Files.write(file, k);
    return file;
  }

  /** {@code key=value} arguments from index {@code from} on, as a map; anything else is refused. */
  public static Map<String, String> keyValueArgs(String[] args, int from) {
    Map<String, String> m = new java.util.LinkedHashMap<>();
    for (int i = from; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      if (eq <= 0) throw new IllegalArgumentException("not key=value: " + args[i]);
      m.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    return m;
  }

  /** Starts the RM and the NodeManagers; returns once all registered. */
  public void start() throws Exception {
    DefaultMetricsSystem.setMiniClusterMode(true);
    cluster = new MiniYARNCluster(options.clusterName(), 1, 0, 1, 1);
    cluster.init(baseConf());
    cluster.start();
    ResourceManager rm = cluster.getResourceManager();
    Configuration rmConf = new Configuration(rm.getConfig());
    for (int i = 0; i < HOSTS.size(); i++) {
      nmConfs[i] = nodeManagerConf(rmConf, i);
      startNodeManager(i);
    }
    long deadline = System.currentTimeMillis() + 60_000;
    while (rm.getRMContext().getRMNodes().size() < HOSTS.size()) {
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("NodeManagers did not register");
      Thread.sleep(50);
    }
  }

  private YarnConfiguration baseConf() {
    YarnConfiguration base = new YarnConfiguration();
    base.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 64);
    base.set(YarnConfiguration.RM_SCHEDULER, CapacityScheduler.class.getName());
    base.setInt(YarnConfiguration.RM_AM_MAX_ATTEMPTS, 10);
    // AMs may take half the cluster (the CapacityScheduler's default is 10 %): the launcher's four
    // 256 MB AMs, and Flink's 1856 MB AM beside a plain one or its own next attempt, would wait in ACCEPTED.
    base.setFloat("yarn.scheduler.capacity.maximum-am-resource-percent", 0.5f);
    base.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 200);
    base.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    base.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    // An AM's AMRM token comes from the NodeManager's AMRMProxy; no Kerberos here.
    base.set("hadoop.security.authentication", "simple");
    options.extraConf().forEach(base::set);
    return base;
  }

  private YarnConfiguration nodeManagerConf(Configuration rmConf, int i) throws IOException {
    YarnConfiguration nc = new YarnConfiguration(rmConf);
    String h = HOSTS.get(i);
    Path dir = nodeDir(i);
    Files.createDirectories(dir.resolve("local"));
    Files.createDirectories(dir.resolve("log"));
    nc.set(YarnConfiguration.NM_LOCAL_DIRS, dir.resolve("local").toString());
    nc.set(YarnConfiguration.NM_LOG_DIRS, dir.resolve("log").toString());
    // Each NodeManager binds its own loopback address, so the RM names it by that address's host name.
    // With recovery a fixed port: a NodeManager with recovery refuses an ephemeral one (ContainerManagerImpl),
    // and a restarted one must come back as the same NodeId for the RM to keep its containers.
    nc.set(YarnConfiguration.NM_ADDRESS, h + ":" + (options.recovery() ? freePort() : 0));
    if (options.recovery()) {
      // Work-preserving NodeManager restart, as production clusters run it: the state store keeps
      // the containers and the AMRMProxy's pipelines (AMRMProxyService#recover rebuilds them), and
      // a supervised NodeManager leaves its containers running when it stops.
      Files.createDirectories(dir.resolve("recovery"));
      nc.setBoolean(YarnConfiguration.NM_RECOVERY_ENABLED, true);
      nc.set(YarnConfiguration.NM_RECOVERY_DIR, dir.resolve("recovery").toString());
      nc.setBoolean(YarnConfiguration.NM_RECOVERY_SUPERVISED, true);
    }
    nc.set(YarnConfiguration.NM_LOCALIZER_ADDRESS, h + ":" + freePort());
    nc.set(YarnConfiguration.NM_WEBAPP_ADDRESS, h + ":0");
    nc.set(YarnConfiguration.NM_COLLECTOR_SERVICE_ADDRESS, h + ":" + freePort());
    nc.setInt(YarnConfiguration.NM_PMEM_MB, options.nodeMb());
    nc.setInt(YarnConfiguration.NM_VCORES, 8);
    nc.setBoolean(YarnConfiguration.NM_CONTAINER_MONITOR_ENABLED, false);
    nc.setBoolean(YarnConfiguration.NM_ENABLE_HARDWARE_CAPABILITY_DETECTION, false);
    nc.setBoolean(YarnConfiguration.AMRM_PROXY_ENABLED, true);
    // The same port on every host, as in a real cluster: an AM finds the proxy at $NM_HOST:port.
    nc.set(YarnConfiguration.AMRM_PROXY_ADDRESS, h + ":" + options.amrmProxyPort());
    nc.set(YarnConfiguration.AMRM_PROXY_INTERCEPTOR_CLASS_PIPELINE, options.pipeline());
    options.interceptorConf().forEach(nc::set);
    return nc;
  }

  /** Index of the host in {@link #HOSTS}, or -1. */
  public static int hostIndex(String host) {
    return HOSTS.indexOf(host);
  }

  /** The host's NodeManager, null while it is stopped. */
  public synchronized NodeManager nodeManager(int i) {
    return nms[i];
  }

  /** The configuration every (re)start of the host's NodeManager uses. */
  public YarnConfiguration nodeManagerConf(int i) {
    return nmConfs[i];
  }

  /** Starts the host's NodeManager (again: with recovery, it recovers its containers and AMRMProxy pipelines). */
  public synchronized void startNodeManager(int i) {
    NodeManager nm = new NodeManager();
    nm.init(new YarnConfiguration(nmConfs[i]));
    nm.start();
    nms[i] = nm;
  }

  public synchronized void stopNodeManager(int i) {
    nms[i].stop();
    nms[i] = null;
  }

  public ResourceManager resourceManager() {
    return cluster.getResourceManager();
  }

  /** The RM's live configuration (its addresses as bound). */
  public YarnConfiguration conf() {
    return new YarnConfiguration(cluster.getResourceManager().getConfig());
  }

  public int rmWebPort() {
    String a = cluster.getResourceManager().getConfig().get(YarnConfiguration.RM_WEBAPP_ADDRESS);
    return Integer.parseInt(a.substring(a.lastIndexOf(':') + 1));
  }

  public AbstractYarnScheduler<?, ?> scheduler() {
    return (AbstractYarnScheduler<?, ?>) cluster.getResourceManager().getResourceScheduler();
  }

  public SchedulerApplicationAttempt schedulerAttempt(ApplicationAttemptId id) {
    return scheduler().getApplicationAttempt(id);
  }

  /** The host's NodeManager directory ({@code local}, {@code log} below it). */
  public Path nodeDir(int i) {
    return work.resolve("nm" + (i + 1));
  }

  /** The pid the host's NodeManager wrote for the container (its launch shell), once it launched it. */
  public Optional<Long> containerPid(ApplicationId app, String host, String containerId) {
    int nm = hostIndex(host);
    if (nm < 0) return Optional.empty();
    Path pidFile = nodeDir(nm).resolve("local").resolve("nmPrivate").resolve(app.toString())
        .resolve(containerId).resolve(containerId + ".pid");
    try {
      return Optional.of(Long.parseLong(Files.readString(pidFile).trim()));
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
  }

  /** The container's process runs: the NodeManager wrote its pid and that process is alive (allocated is not launched). */
  public boolean containerRuns(ApplicationId app, String host, String containerId) {
    return containerPid(app, host, containerId).flatMap(ProcessHandle::of).map(ProcessHandle::isAlive).orElse(false);
  }

  /** A file the application's containers see in their local dirs ({@code usercache/<user>/appcache/<app>/<name>}), on a host. */
  public record AppFile(String host, Path path) {}

  /** Every such file of the application, on any host, in host order. */
  public List<AppFile> appFiles(ApplicationId app, String name) throws IOException {
    List<AppFile> out = new ArrayList<>();
    for (int i = 0; i < HOSTS.size(); i++) {
      Path users = nodeDir(i).resolve("local").resolve("usercache");
      if (!Files.isDirectory(users)) continue;
      try (Stream<Path> us = Files.list(users)) {
        for (Path u : (Iterable<Path>) us::iterator) {
          Path f = u.resolve("appcache").resolve(app.toString()).resolve(name);
          if (Files.isRegularFile(f)) out.add(new AppFile(HOSTS.get(i), f));
        }
      }
    }
    return out;
  }

  /**
   * Ends everything the JVM started, at once: the containers' processes are its descendants and
   * are killed first, so none outlives the run (a NodeManager's own stop waits 10 s on its log
   * handler's delayed deletions, and a halted one leaves its containers behind). Nothing of a
   * throwaway cluster needs an orderly stop; its files go with the harness's temp dir.
   */
  public static void haltWithContainers(int status) {
    ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly);
    Runtime.getRuntime().halt(status);
  }
}
