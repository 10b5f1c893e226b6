package io.github.flinkyarnblocklist.launcher;

import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationAttemptState;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.api.YarnClientApplication;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;

/** POST /probe/star-blacklist of the launcher's control endpoint. */
final class StarBlacklistProbe {
  private StarBlacklistProbe() {}

  /** The real RM's answer to a blacklist holding '*': an unmanaged AM of its own asks for it. */
  static Map<String, Object> probe(YarnClient yarn, YarnConfiguration conf) throws Exception {
    YarnClientApplication app = yarn.createApplication();
    ApplicationSubmissionContext ctx = app.getApplicationSubmissionContext();
    ctx.setApplicationName("star-probe");
    ctx.setUnmanagedAM(true);
    ctx.setResource(Resource.newInstance(64, 1));
    ctx.setAMContainerSpec(ContainerLaunchContext.newInstance(Map.of(), Map.of(), List.of(), Map.of(), null, Map.of()));
    ApplicationId id = yarn.submitApplication(ctx);
    long deadline = System.currentTimeMillis() + 30_000;
    ApplicationReport r = yarn.getApplicationReport(id);
    while (r.getCurrentApplicationAttemptId() == null
        || yarn.getApplicationAttemptReport(r.getCurrentApplicationAttemptId()).getYarnApplicationAttemptState() != YarnApplicationAttemptState.LAUNCHED) {
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("probe AM not launched");
      Thread.sleep(50);
      r = yarn.getApplicationReport(id);
    }
    Token<AMRMTokenIdentifier> token = yarn.getAMRMToken(id);
    token.setService(ClientRMProxy.getAMRMTokenService(conf));
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser(r.getCurrentApplicationAttemptId().toString());
    ugi.addToken(token);
    Map<String, Object> out = new LinkedHashMap<>();
    ugi.doAs((PrivilegedExceptionAction<Void>) () -> {
      AMRMClient<AMRMClient.ContainerRequest> c = AMRMClient.createAMRMClient();
      c.init(conf);
      c.start();
      try {
        c.registerApplicationMaster("", 0, "");
        // AMRMClientImpl#updateBlacklist mutates the lists it is given: pass mutable ones.
        c.updateBlacklist(new ArrayList<>(List.of("*")), new ArrayList<>());
        try {
          c.allocate(0.1f);
          out.put("refused", false);
        } catch (Exception e) {
          out.put("refused", true);
          out.put("exception", e.getClass().getName());
          out.put("message", String.valueOf(e.getMessage()));
        }
      } finally {
        c.stop();
      }
      return null;
    });
    yarn.killApplication(id);
    return out;
  }
}
