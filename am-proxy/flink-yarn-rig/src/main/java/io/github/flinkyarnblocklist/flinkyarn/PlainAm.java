package io.github.flinkyarnblocklist.flinkyarn;

import io.github.flinkyarnblocklist.yarntest.FollowProcess;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * A plain ApplicationMaster beside Flink on the same NodeManagers, not opted in to the blocklist
 * interceptor: it registers through its NodeManager's AMRMProxy (as every AM there does), puts one
 * host of its own on its blacklist and heartbeats. What the RM holds for it must be exactly that.
 *
 * <p>Arguments: {@code <amrmProxyPort> <ownBlacklistedHost> <rigPid>}; it ends with the rig.
 */
public final class PlainAm {
  private PlainAm() {}

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    String own = args[1];
    long rig = Long.parseLong(args[2]);
    // Not from the allocate loop: once the rig's RM is gone, allocate() retries for the client's
    // connect wait (15 min by default), and this AM would outlive the suite by that much.
    FollowProcess.haltWhenGone(rig, 500, "plain-am: rig");
    YarnConfiguration conf = new YarnConfiguration();
    String host = System.getenv("NM_HOST");
    conf.set(YarnConfiguration.RM_SCHEDULER_ADDRESS, host + ":" + port);
    AMRMClient<AMRMClient.ContainerRequest> rm = AMRMClient.createAMRMClient();
    rm.init(conf);
    rm.start();
    rm.registerApplicationMaster(host, 0, "");
    // AMRMClientImpl#updateBlacklist changes the lists it is given.
    rm.updateBlacklist(new ArrayList<>(List.of(own)), new ArrayList<>());
    while (true) {
      rm.allocate(0.1f);
      Thread.sleep(500);
    }
  }
}
