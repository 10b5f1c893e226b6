package io.github.flinkyarnblocklist.flinkyarn;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.github.flinkyarnblocklist.amrmproxy.Json;
import io.github.flinkyarnblocklist.yarntest.ControlEndpoint;
import io.github.flinkyarnblocklist.yarntest.LoopbackYarn;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.flink.api.common.JobID;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;

/**
 * Test rig: a MiniYARNCluster whose three NodeManagers run the blocklist interceptor (MiniYarn)
 * and an unmodified Flink session deployed into it by Flink's YarnClusterDescriptor, running a
 * never-ending streaming job with one TaskManager on each NodeManager. Prints one JSON line when
 * the job runs, then serves a control endpoint on 127.0.0.1 for what tests read inside YARN (the
 * scheduler's blacklist for Flink's current attempt, where its containers are) and for kills.
 *
 * <p>Arguments: {@code <workDir> <hostsFile> <amrmProxyPort> [flinkKey=value …]}: the keys are
 * what a user puts in Flink's config.yaml (the test passes docs/deploy.md's).
 */
public final class FlinkYarnRig {
  private final MiniYarn yarn;
  private final FlinkSession flink;
  private final Map<String, String> ipOf;
  private final Neighbour neighbour;
  private final String hostsFile;
  private final ControlEndpoint endpoint = new ControlEndpoint(Json::write);
  private JobID streamJob;
  private volatile boolean ready;

  private FlinkYarnRig(MiniYarn yarn, FlinkSession flink, String hostsFile) throws IOException {
    this.yarn = yarn;
    this.flink = flink;
    this.hostsFile = hostsFile;
    this.ipOf = hosts(hostsFile);
    this.neighbour = new Neighbour(yarn, flink.yarn());
  }

  public static void main(String[] args) throws Exception {
    long t0 = System.currentTimeMillis();
    Path work = Paths.get(args[0]);
    String hostsFile = args[1];
    int amrmProxyPort = Integer.parseInt(args[2]);
    Map<String, String> user = LoopbackYarn.keyValueArgs(args, 3);
    MiniYarn yarn = new MiniYarn(work, amrmProxyPort);
    Runtime.getRuntime().addShutdownHook(new Thread(FlinkYarnRig::stop));
    yarn.start(FlinkSession.START_NODE_MB);
    yarn.writeClientSite(work.resolve("hadoop-conf"));
    long yarnMs = System.currentTimeMillis() - t0;
    FlinkSession flink = new FlinkSession(work, yarn.conf());
    FlinkYarnRig rig = new FlinkYarnRig(yarn, flink, hostsFile);
    org.apache.flink.configuration.Configuration flinkConf = flink.configuration(hostsFile, user);
    flink.deploy(flinkConf);
    long deployMs = System.currentTimeMillis() - t0;
    // One TaskManager per node: the AM's node gets room for the AM and one, the others for one;
    // once they run, any node has room for the AM and three.
    ApplicationAttemptId attempt = flink.yarn().getApplicationReport(flink.applicationId()).getCurrentApplicationAttemptId();
    String amHost = (String) ((Map<?, ?>) rig.state().get("amContainer")).get("host");
    int jm = (int) yarn.amContainerMb(attempt);
    int tm = FlinkSession.taskManagerMb(flinkConf);
    yarn.setNodeMemory(h -> h.equals(amHost) ? jm + tm : tm);
    rig.streamJob = flink.submit(Jobs.stream());
    rig.waitOneTaskManagerPerNode(240_000);
    yarn.setNodeMemory(h -> jm + 3 * tm);
    HttpServer control = rig.serveControl();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("rmWebapp", "http://127.0.0.1:" + yarn.rmWebPort());
    out.put("control", "http://127.0.0.1:" + control.getAddress().getPort());
    out.put("nodes", MiniYarn.HOSTS);
    out.put("applicationId", flink.applicationId().toString());
    out.put("streamJobId", rig.streamJob.toString());
    out.put("flinkVersion", org.apache.flink.runtime.util.EnvironmentInformation.getVersion());
    out.put("hadoopVersion", org.apache.hadoop.util.VersionInfo.getVersion());
    out.put("hadoopConfDir", work.resolve("hadoop-conf").toString());
    out.put("yarnMs", yarnMs);
    out.put("deployMs", deployMs);
    out.put("startupMs", System.currentTimeMillis() - t0);
    System.out.println(Json.write(out));
    System.out.flush();
    rig.ready = true;
    while (System.in.read() >= 0) {
      // runs until the harness closes stdin
    }
    System.exit(0);
  }

  /** Host name → loopback address, from the hosts file the JVMs resolve with. */
  private static Map<String, String> hosts(String file) throws IOException {
    Map<String, String> m = new HashMap<>();
    for (String line : Files.readAllLines(Path.of(file))) {
      String[] f = line.trim().split("\\s+");
      for (int i = 1; i < f.length; i++) m.put(f[i], f[0]);
    }
    return m;
  }

  private void waitOneTaskManagerPerNode(long timeoutMs) throws Exception {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (true) {
      Map<String, Object> s = state();
      TreeSet<Object> hosts = new TreeSet<>();
      int running = 0;
      for (Object o : (List<?>) s.get("taskManagers")) {
        Map<?, ?> c = (Map<?, ?>) o;
        hosts.add(c.get("host"));
        if (Boolean.TRUE.equals(c.get("running"))) running++;
      }
      if (running == MiniYarn.HOSTS.size() && hosts.size() == MiniYarn.HOSTS.size()) return;
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("no TaskManager on every node: " + Json.write(s));
      Thread.sleep(200);
    }
  }

  /** What YARN holds for Flink's application: its current attempt, the scheduler's blacklist, its containers. */
  Map<String, Object> state() throws Exception {
    ApplicationReport r = flink.yarn().getApplicationReport(flink.applicationId());
    ApplicationAttemptId attempt = r.getCurrentApplicationAttemptId();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("applicationId", flink.applicationId().toString());
    m.put("state", r.getYarnApplicationState().toString());
    m.put("appAttemptId", attempt == null ? null : attempt.toString());
    m.put("attemptState", attempt == null ? null
        : flink.yarn().getApplicationAttemptReport(attempt).getYarnApplicationAttemptState().toString());
    SchedulerApplicationAttempt sa = attempt == null ? null : yarn.schedulerAttempt(attempt);
    m.put("schedulerBlacklist", sa == null ? List.of() : new ArrayList<>(new TreeSet<>(sa.getBlacklistedNodes())));
    List<Map<String, Object>> tms = new ArrayList<>();
    Object am = null;
    for (Map<String, Object> c : attempt == null ? List.<Map<String, Object>>of() : yarn.containers(flink.applicationId(), attempt)) {
      if (Boolean.TRUE.equals(c.remove("am"))) am = c;
      else tms.add(c);
    }
    m.put("amContainer", am);
    m.put("taskManagers", tms);
    m.put("flinkRest", restUrl(r.getOriginalTrackingUrl()));
    return m;
  }

  /** Flink's web address as it registered it (http://nmN.blocklist.test:port), by loopback address for Node. */
  private String restUrl(String tracking) {
    if (tracking == null || !tracking.startsWith("http")) return null;
    URI u = URI.create(tracking);
    String ip = ipOf.getOrDefault(u.getHost(), u.getHost());
    return "http://" + ip + ":" + u.getPort();
  }

  private HttpServer serveControl() throws IOException {
    return endpoint.serve(this::control);
  }

  private void control(HttpExchange ex) throws Exception {
    String path = ex.getRequestURI().getPath();
    String method = ex.getRequestMethod();
    Map<String, String> q = ControlEndpoint.query(ex);
    if (path.equals("/flink") && method.equals("GET")) {
      endpoint.reply(ex, 200, state());
      return;
    }
    // POST /flink/kill?container=<id>: SIGKILL one of the application's containers (a TaskManager, the JobManager).
    if (path.equals("/flink/kill") && method.equals("POST") && q.containsKey("container")) {
      ApplicationAttemptId attempt = flink.yarn().getApplicationReport(flink.applicationId()).getCurrentApplicationAttemptId();
      endpoint.reply(ex, 200, yarn.kill(flink.applicationId(), attempt, q.get("container")));
      return;
    }
    // POST /flink/jobs/slow-batch: the batch job whose slow attempt makes Flink block a node itself.
    if (path.equals("/flink/jobs/slow-batch") && method.equals("POST")) {
      endpoint.reply(ex, 200, Map.of("jobId", flink.submit(Jobs.slowBatch()).toString()));
      return;
    }
    // POST /neighbour?own=<host>: start the plain AM beside Flink; GET /neighbour: what YARN holds for it.
    if (path.equals("/neighbour")) {
      endpoint.reply(ex, 200, method.equals("POST") ? neighbour.start(hostsFile, q.getOrDefault("own", "")) : neighbour.state());
      return;
    }
    endpoint.reply(ex, 404, Map.of("errors", List.of("no such control endpoint: " + method + " " + path)));
  }

  /**
   * Ends everything at once: the containers' processes (Flink's JobManager and TaskManagers, the
   * sidecar beside the JobManager) are this JVM's descendants and are killed first, so none
   * outlives the run; the cluster's files go with the harness's temp dir.
   */
  private static void stop() {
    LoopbackYarn.haltWithContainers(0);
  }
}
