package io.github.flinkyarnblocklist.launcher;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.github.flinkyarnblocklist.amrmproxy.BlocklistRequestInterceptor;
import io.github.flinkyarnblocklist.amrmproxy.Json;
import io.github.flinkyarnblocklist.yarntest.ControlEndpoint;
import io.github.flinkyarnblocklist.yarntest.LoopbackYarn;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.hadoop.yarn.api.ApplicationConstants;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationAttemptState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.api.YarnClientApplication;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.nodemanager.amrmproxy.DefaultRequestInterceptor;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerAppUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;

/**
 * Test launcher: a real ResourceManager (MiniYARNCluster, real REST API) and three real
 * NodeManagers with distinct host names (nm1/nm2/nm3.blocklist.test on 127.0.0.2-4, resolved
 * through the JVM's hosts file: start with -Djdk.net.hosts.file=…), each with the AMRMProxy
 * enabled and the blocklist interceptor in its pipeline; two applications whose AM (KeeperAm)
 * runs in a real container: "main" keeps N workers, "other" none (the neighbour that must not
 * reach main's proxy). Prints one JSON line with its addresses when everything runs, then serves
 * a control endpoint on 127.0.0.1 for what tests observe inside YARN.
 *
 * <p>Arguments: {@code <workDir> <hostsFile> [workers] [key=value …]}: each {@code key=value} is
 * set on the cluster's configuration (the RM's and, through it, the NodeManagers').
 */
public final class YarnLauncher {
  static final List<String> HOSTS = LoopbackYarn.HOSTS;
  /** The AM's own blacklist entry: a host the scheduler knows nothing of, so the AM loses no capacity. */
  static final String AM_OWN_HOST = "am-own.blocklist.test";
  /** What opts an AM in (AmContainer.OPT_IN_ENV, package-private there). */
  static final String BLOCKLIST_OPT_IN_ENV = "BLOCKLIST_AMRM_PROXY";
  /** Applications whose AM asks for the interceptor. */
  private static final java.util.Set<String> OPTED_IN = java.util.Set.of("main", "other");

  private final Path work;
  private final String hostsFile;
  private final int workers;
  private LoopbackYarn cluster;
  private YarnConfiguration conf;
  private YarnClient yarn;
  private int amrmProxyPort;
  private final Map<String, ApplicationId> apps = new LinkedHashMap<>();
  /** Set once the JSON line is out: a launcher that never got there ends with status 1. */
  private volatile boolean ready;
  private final ControlEndpoint endpoint = new ControlEndpoint(Json::write);
  private NodeManagerRestarts nodeManagers;

  /** Keys set on the cluster's configuration after the launcher's own (the RM's, copied to each NodeManager). */
  private final Map<String, String> extraConf;

  YarnLauncher(Path work, String hostsFile, int workers, Map<String, String> extraConf) {
    this.work = work;
    this.hostsFile = hostsFile;
    this.workers = workers;
    this.extraConf = extraConf;
  }

  public static void main(String[] args) throws Exception {
    long t0 = System.currentTimeMillis();
    YarnLauncher l = new YarnLauncher(Paths.get(args[0]), args[1], args.length > 2 ? Integer.parseInt(args[2]) : 3, LoopbackYarn.keyValueArgs(args, 3));
    Runtime.getRuntime().addShutdownHook(new Thread(l::stop));
    l.start();
    HttpServer control = l.serveControl();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("rmWebapp", "http://127.0.0.1:" + l.rmWebPort());
    out.put("control", "http://127.0.0.1:" + control.getAddress().getPort());
    out.put("nodes", HOSTS);
    out.put("applications", l.appIds());
    out.put("amOwnHost", AM_OWN_HOST);
    out.put("startupMs", System.currentTimeMillis() - t0);
    // What the matrix suite checks: the NodeManagers' Hadoop and where the interceptor was loaded from.
    out.put("hadoopVersion", org.apache.hadoop.util.VersionInfo.getVersion());
    out.put("interceptorCodeSource", Paths.get(BlocklistRequestInterceptor.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
    System.out.println(Json.write(out));
    System.out.flush();
    l.ready = true;
    // Ends when the harness closes our stdin (or kills us).
    while (System.in.read() >= 0) {
      // keep running
    }
    System.exit(0);
  }

  void start() throws Exception {
    amrmProxyPort = LoopbackYarn.freePort();
    Path key = LoopbackYarn.writeSecretKey(work.resolve("amrm-proxy.key"));
    Map<String, String> interceptor = Map.of(
        BlocklistRequestInterceptor.ADDRESS, "127.0.0.1:" + LoopbackYarn.freePort(),
        BlocklistRequestInterceptor.SECRET_KEY_FILE, key.toString());
    // 2 GB nodes: four AMs of 256 MB and main's workers. Recovery on: /nodes/<host>/stop and start.
    cluster = new LoopbackYarn(work, new LoopbackYarn.Options("blocklist", 2048, amrmProxyPort,
        BlocklistRequestInterceptor.class.getName() + "," + DefaultRequestInterceptor.class.getName(),
        interceptor, true, extraConf));
    cluster.start();
    nodeManagers = new NodeManagerRestarts(cluster);
    conf = cluster.conf();
    yarn = YarnClient.createYarnClient();
    yarn.init(conf);
    yarn.start();
    // "bare" first, while no NodeManager has the blocklist interceptor in its pipeline: the
    // baseline of what an allocate costs a plain AM ("plain", not opted in, beside it).
    nodeManagers.withPipeline(DefaultRequestInterceptor.class.getName(), () -> {
      apps.put("bare", submit("keeper-bare", 0, PLAIN_OWN_HOST, false));
      waitReady("bare", 0, 120_000);
    });
    apps.put("main", submit("keeper-main", workers, AM_OWN_HOST, true));
    apps.put("other", submit("keeper-other", 0, "", true));
    apps.put("plain", submit("keeper-plain", 0, PLAIN_OWN_HOST, false));
    for (String name : apps.keySet()) waitReady(name, name.equals("main") ? workers : 0, 120_000);
  }

  /** A plain AM's own blacklist entry (not opted in: it must reach the RM as the AM sent it). */
  static final String PLAIN_OWN_HOST = "plain-own.blocklist.test";

  int rmWebPort() {
    return cluster.rmWebPort();
  }

  Map<String, Object> appIds() {
    Map<String, Object> m = new LinkedHashMap<>();
    apps.forEach((k, v) -> m.put(k, v.toString()));
    return m;
  }

  private ApplicationId submit(String name, int n, String ownBlacklist, boolean optIn) throws Exception {
    YarnClientApplication app = yarn.createApplication();
    ApplicationSubmissionContext ctx = app.getApplicationSubmissionContext();
    ctx.setApplicationName(name);
    ctx.setApplicationType("blocklist-test");
    ctx.setKeepContainersAcrossApplicationAttempts(true);
    ctx.setMaxAppAttempts(10);
    ctx.setResource(Resource.newInstance(256, 1));
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    String cmd = String.join(" ", java, "-Xmx96m", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
        "-Djdk.net.hosts.file=" + hostsFile,
        "-Dlog4j.configuration=log4j.properties",
        // The AM (and each worker it starts) ends with this launcher: a launcher that is
        // SIGKILLed (a test run killed) leaves its containers' processes behind.
        "-D" + KeeperAm.LAUNCHER_PID + "=" + ProcessHandle.current().pid(),
        "-cp", System.getProperty("java.class.path"),
        KeeperAm.class.getName(), Integer.toString(n), Integer.toString(amrmProxyPort),
        "'" + ownBlacklist + "'",
        "1>" + ApplicationConstants.LOG_DIR_EXPANSION_VAR + "/stdout",
        "2>" + ApplicationConstants.LOG_DIR_EXPANSION_VAR + "/stderr");
    // The per-application opt-in: only AMs that carry it are served by the interceptor.
    Map<String, String> env = optIn ? Map.of(BLOCKLIST_OPT_IN_ENV, "true") : Map.of();
    ContainerLaunchContext clc = ContainerLaunchContext.newInstance(
        Map.of(), env, List.of(cmd), Map.of(), null, Map.of());
    ctx.setAMContainerSpec(clc);
    return yarn.submitApplication(ctx);
  }

  SchedulerApplicationAttempt schedulerAttempt(ApplicationAttemptId id) {
    return cluster.schedulerAttempt(id);
  }

  /**
   * For each node the scheduler knows, whether it skips the node for the app's current attempt:
   * SchedulerAppUtils#isPlaceBlacklisted, the check the CapacityScheduler's allocator makes
   * (the attempt's blacklist against SchedulerNode#getNodeName, then its rack).
   */
  Map<String, Object> placement(String name) throws Exception {
    ApplicationAttemptId attempt = yarn.getApplicationReport(apps.get(name)).getCurrentApplicationAttemptId();
    SchedulerApplicationAttempt sa = schedulerAttempt(attempt);
    AbstractYarnScheduler<?, ?> s = cluster.scheduler();
    List<Object> nodes = new ArrayList<>();
    for (SchedulerNode n : s.getNodeTracker().getAllNodes()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("nodeId", n.getNodeID().toString());
      m.put("nodeName", n.getNodeName());
      m.put("skipped", SchedulerAppUtils.isPlaceBlacklisted(sa, n, org.slf4j.LoggerFactory.getLogger(YarnLauncher.class)));
      nodes.add(m);
    }
    nodes.sort(java.util.Comparator.comparing(o -> String.valueOf(((Map<?, ?>) o).get("nodeId"))));
    return Map.of("appAttemptId", attempt.toString(), "nodes", nodes);
  }

  /** Registered through the proxy, the hand-off written, and the wanted number of workers live. */
  private void waitReady(String name, int n, long timeoutMs) throws Exception {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (true) {
      Map<String, Object> st = appState(name);
      Object live = st.get("liveWorkers");
      boolean served = st.get("proxy") != null || !OPTED_IN.contains(name);
      if (Boolean.TRUE.equals(st.get("registered")) && served && live instanceof Integer && (Integer) live >= n) return;
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException(name + " not ready: " + Json.write(st));
      Thread.sleep(100);
    }
  }

  Map<String, Object> appState(String name) throws Exception {
    ApplicationId id = apps.get(name);
    ApplicationReport r = yarn.getApplicationReport(id);
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("applicationId", id.toString());
    m.put("state", r.getYarnApplicationState().toString());
    ApplicationAttemptId attempt = r.getCurrentApplicationAttemptId();
    m.put("appAttemptId", attempt == null ? null : attempt.toString());
    SchedulerApplicationAttempt sa = attempt == null ? null : schedulerAttempt(attempt);
    YarnApplicationAttemptState as = attempt == null ? null : yarn.getApplicationAttemptReport(attempt).getYarnApplicationAttemptState();
    m.put("attemptState", as == null ? null : as.toString());
    m.put("registered", as == YarnApplicationAttemptState.RUNNING);
    m.put("schedulerBlacklist", sa == null ? List.of() : new ArrayList<>(new TreeSet<>(sa.getBlacklistedNodes())));
    List<Object> workersAt = new ArrayList<>();
    if (sa != null) {
      sa.getLiveContainers().forEach(c -> {
        if (!c.isAMContainer()) {
          Map<String, Object> w = new LinkedHashMap<>();
          w.put("containerId", c.getContainerId().toString());
          w.put("host", c.getAllocatedNode().getHost());
          // Its process runs (the NodeManager wrote its pid and the process is alive): allocated
          // is not yet launched, and a kill needs the process.
          w.put("running", cluster.containerRuns(id, c.getAllocatedNode().getHost(), c.getContainerId().toString()));
          workersAt.add(w);
        }
      });
    }
    // Live containers that are not an AM's (after a failover the RM may still list the old AM's for a while).
    m.put("liveWorkers", workersAt.size());
    m.put("workers", workersAt);
    m.put("proxy", attempt == null ? null : handoff(id, attempt));
    return m;
  }

  /** The hand-off the interceptor wrote for this attempt into the app's local dirs, as the AM container sees it. */
  private Map<String, Object> handoff(ApplicationId app, ApplicationAttemptId attempt) throws IOException {
    for (LoopbackYarn.AppFile f : cluster.appFiles(app, BlocklistRequestInterceptor.HANDOFF_JSON)) {
      String text = Files.readString(f.path(), StandardCharsets.UTF_8);
      try {
        @SuppressWarnings("unchecked")
        Map<String, Object> j = (Map<String, Object>) Json.parse(text.trim());
        if (attempt.toString().equals(j.get("appAttemptId"))) {
          j.put("handoffFile", f.path().toString());
          j.put("nodeHost", f.host());
          return j;
        }
      } catch (Json.BadJson e) {
        // being rewritten: the next poll sees it whole
      }
    }
    return null;
  }

  /** What the application's AM measured of its allocate calls (KeeperAm.TimedClient), from its container's directory. */
  private Map<String, Object> allocateLatency(ApplicationId app) throws IOException {
    List<Path> found = new ArrayList<>();
    for (int i = 0; i < HOSTS.size(); i++) {
      Path usercache = cluster.nodeDir(i).resolve("local").resolve("usercache");
      if (!Files.isDirectory(usercache)) continue;
      try (Stream<Path> files = Files.find(usercache, 5, (f, a) -> f.getFileName().toString().equals(KeeperAm.LATENCY_FILE)
          && f.toString().contains("/" + app + "/"))) {
        files.forEach(found::add);
      }
    }
    if (found.isEmpty()) return Map.of("count", 0);
    @SuppressWarnings("unchecked")
    Map<String, Object> m = (Map<String, Object>) parseJson(Files.readString(found.get(0), StandardCharsets.UTF_8));
    return m;
  }

  private static Object parseJson(String text) throws IOException {
    try {
      return Json.parse(text.trim());
    } catch (Json.BadJson e) {
      throw new IOException(e.getMessage());
    }
  }

  /**
   * Kills one worker container's process on the host with SIGKILL, as a failing machine would:
   * the NodeManager reports it completed with exit code 137, which YARN counts toward node
   * blacklisting (unlike a release). The pid comes from the NodeManager's own pid file.
   */
  Map<String, Object> killWorker(String name, String host, String only) throws Exception {
    ApplicationId app = apps.get(name);
    ApplicationAttemptId attempt = yarn.getApplicationReport(app).getCurrentApplicationAttemptId();
    SchedulerApplicationAttempt sa = schedulerAttempt(attempt);
    for (var c : sa.getLiveContainers()) {
      if (c.isAMContainer() || !c.getAllocatedNode().getHost().equals(host)) continue;
      String id = c.getContainerId().toString();
      if (only != null && !only.equals(id)) continue;
      java.util.Optional<Long> found = cluster.containerPid(app, host, id);
      if (found.isEmpty()) continue;
      long pid = found.get();
      boolean killed = ProcessHandle.of(pid).map(ProcessHandle::destroyForcibly).orElse(false);
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("containerId", id);
      out.put("pid", pid);
      out.put("killed", killed);
      return out;
    }
    Map<String, Object> none = new LinkedHashMap<>();
    none.put("containerId", null);
    none.put("killed", false);
    return none;
  }

  HttpServer serveControl() throws IOException {
    return endpoint.serve(this::control);
  }

  private void control(HttpExchange ex) throws Exception {
    String path = ex.getRequestURI().getPath();
    String method = ex.getRequestMethod();
    String[] p = path.split("/");
    // /apps/<name>, /apps/<name>/fail-attempt, /apps/<name>/placement, /probe/star-blacklist
    if (p.length >= 3 && p[1].equals("apps") && apps.containsKey(p[2])) {
      String name = p[2];
      if (p.length == 3 && method.equals("GET")) {
        endpoint.reply(ex, 200, appState(name));
        return;
      }
      if (p.length == 4 && p[3].equals("placement") && method.equals("GET")) {
        endpoint.reply(ex, 200, placement(name));
        return;
      }
      if (p.length == 4 && p[3].equals("allocate-latency") && method.equals("GET")) {
        endpoint.reply(ex, 200, allocateLatency(apps.get(name)));
        return;
      }
      if (p.length == 4 && p[3].equals("fail-attempt") && method.equals("POST")) {
        ApplicationAttemptId before = yarn.getApplicationReport(apps.get(name)).getCurrentApplicationAttemptId();
        yarn.failApplicationAttempt(before);
        endpoint.reply(ex, 200, Map.of("failed", before.toString()));
        return;
      }
    }
    if (p.length == 4 && p[1].equals("apps") && apps.containsKey(p[2]) && p[3].equals("kill-worker") && method.equals("POST")) {
      // ?host=<host>[&container=<id>]: the first worker on the host, or that one.
      Map<String, String> q = ControlEndpoint.query(ex);
      endpoint.reply(ex, 200, killWorker(p[2], q.getOrDefault("host", ""), q.get("container")));
      return;
    }
    if (path.equals("/probe/star-blacklist") && method.equals("POST")) {
      endpoint.reply(ex, 200, StarBlacklistProbe.probe(yarn, conf));
      return;
    }
    // /nodes/<host>/stop, /nodes/<host>/start: a NodeManager restart with recovery.
    if (p.length == 4 && p[1].equals("nodes") && method.equals("POST") && (p[3].equals("stop") || p[3].equals("start"))) {
      endpoint.reply(ex, 200, p[3].equals("stop") ? nodeManagers.stop(p[2]) : nodeManagers.start(p[2]));
      return;
    }
    // /nodes/<host>/amrmproxy-store: the AMRMProxy entries in the NodeManager's state store, by attempt.
    if (p.length == 4 && p[1].equals("nodes") && p[3].equals("amrmproxy-store") && method.equals("GET")) {
      endpoint.reply(ex, 200, nodeManagers.amrmProxyStore(p[2]));
      return;
    }
    if (path.equals("/nodes") && method.equals("GET")) {
      endpoint.reply(ex, 200, Map.of("nodes", HOSTS));
      return;
    }
    endpoint.reply(ex, 404, Map.of("errors", List.of("no such control endpoint: " + path)));
  }

  /**
   * Ends everything this launcher started, at once (LoopbackYarn#haltWithContainers). Whatever a
   * kill misses, a launch racing it, follows the launcher's pid: KeeperAm.
   */
  void stop() {
    LoopbackYarn.haltWithContainers(ready ? 0 : 1);
  }
}
