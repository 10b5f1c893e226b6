package io.github.flinkyarnblocklist.flinkyarn;

import io.github.flinkyarnblocklist.amrmproxy.BlocklistRequestInterceptor;
import java.io.IOException;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.hadoop.yarn.api.ApplicationConstants;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.api.YarnClientApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;

/** The plain AM (PlainAm) beside Flink: started on request, read inside the RM like Flink's. */
final class Neighbour {
  private final MiniYarn yarn;
  private final YarnClient client;
  private ApplicationId app;

  Neighbour(MiniYarn yarn, YarnClient client) {
    this.yarn = yarn;
    this.client = client;
  }

  /** Submits the plain AM (no opt-in in its environment) with `ownHost` on its own blacklist. */
  synchronized Map<String, Object> start(String hostsFile, String ownHost) throws Exception {
    if (app != null) return state();
    YarnClientApplication a = client.createApplication();
    ApplicationSubmissionContext ctx = a.getApplicationSubmissionContext();
    ctx.setApplicationName("plain-neighbour");
    ctx.setApplicationType("blocklist-test");
    ctx.setResource(Resource.newInstance(128, 1));
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    String cmd = String.join(" ", java, "-Xmx64m", "-XX:TieredStopAtLevel=1", "-Djdk.net.hosts.file=" + hostsFile,
        "-cp", System.getProperty("java.class.path"), PlainAm.class.getName(),
        Integer.toString(yarn.amrmProxyPort()), ownHost, Long.toString(ProcessHandle.current().pid()),
        "1>" + ApplicationConstants.LOG_DIR_EXPANSION_VAR + "/stdout",
        "2>" + ApplicationConstants.LOG_DIR_EXPANSION_VAR + "/stderr");
    ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(Map.of(), Map.of(), List.of(cmd), Map.of(), null, Map.of()));
    app = client.submitApplication(ctx);
    return state();
  }

  /** Its attempt, the scheduler's blacklist for it, and whether the interceptor wrote it a hand-off. */
  synchronized Map<String, Object> state() throws Exception {
    Map<String, Object> m = new LinkedHashMap<>();
    if (app == null) {
      m.put("applicationId", null);
      return m;
    }
    ApplicationReport r = client.getApplicationReport(app);
    ApplicationAttemptId attempt = r.getCurrentApplicationAttemptId();
    m.put("applicationId", app.toString());
    m.put("state", r.getYarnApplicationState().toString());
    m.put("attemptState", attempt == null ? null : client.getApplicationAttemptReport(attempt).getYarnApplicationAttemptState().toString());
    SchedulerApplicationAttempt sa = attempt == null ? null : yarn.schedulerAttempt(attempt);
    m.put("schedulerBlacklist", sa == null ? List.of() : new ArrayList<>(new TreeSet<>(sa.getBlacklistedNodes())));
    m.put("handoffFiles", handoffs());
    return m;
  }

  /** Hand-off files the interceptor wrote into this application's local dirs, on any node. */
  private List<String> handoffs() throws IOException {
    return yarn.appFiles(app, BlocklistRequestInterceptor.HANDOFF_JSON).stream().map(f -> f.path().toString()).toList();
  }
}
