package io.github.flinkyarnblocklist.launcher;

import io.github.flinkyarnblocklist.yarntest.FollowProcess;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import org.apache.hadoop.yarn.api.ApplicationConstants;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterResponse;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.UpdatedContainer;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.async.AMRMClientAsync;
import org.apache.hadoop.yarn.client.api.async.NMClientAsync;
import org.apache.hadoop.yarn.client.api.impl.AMRMClientImpl;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;

/**
 * A small ApplicationMaster that behaves like Flink's YARN resource manager where it matters here:
 * it keeps N worker containers running, asks for a replacement whenever one completes (lost,
 * killed or released by someone else), keeps containers across attempts, and may put hosts on
 * its own blacklist through its AMRMClient (as Flink's blocklist does). It talks to the RM through
 * the NodeManager's AMRMProxy on its own host, as every AM does when the proxy is enabled.
 *
 * <p>Arguments: {@code <workers> <amrmProxyPort> [own-blacklisted-host,…]}.
 */
public final class KeeperAm {
  private static final Priority PRIORITY = Priority.newInstance(1);
  private static final Resource WORKER = Resource.newInstance(128, 1);
  /** System property: the pid of the test's YARN launcher, whose end this AM follows. */
  static final String LAUNCHER_PID = "keeper.launcher.pid";

  /**
   * A worker: one process that idles until the launcher is gone (GNU tail's --pid, checked each
   * second), so a worker the NodeManager could not stop, as a launcher halted or SIGKILLed leaves
   * them, does not outlive the test run. One process, exec'd: the pid in the NodeManager's pid
   * file is the worker's, and a SIGKILL of it ends the container with exit 137 (kill-worker test).
   */
  static String workerCommand(long launcher) {
    if (launcher <= 0) throw new IllegalArgumentException("-D" + LAUNCHER_PID + " is required: workers end with the launcher");
    return "exec tail -f /dev/null --pid=" + launcher;
  }

  /** Where the AM writes what its allocate calls took (in its container's working directory). */
  static final String LATENCY_FILE = "allocate-latency.json";

  /**
   * The AM's AMRMClient, timing each allocate round trip (through the NodeManager's AMRMProxy to
   * the RM and back): what an interceptor in the pipeline adds shows here.
   */
  static final class TimedClient extends AMRMClientImpl<ContainerRequest> {
    private final long[] micros = new long[4096];
    private int n;

    @Override
    public AllocateResponse allocate(float progress) throws YarnException, IOException {
      long t0 = System.nanoTime();
      AllocateResponse r = super.allocate(progress);
      record((System.nanoTime() - t0) / 1000);
      return r;
    }

    private synchronized void record(long us) {
      if (n < micros.length) micros[n++] = us;
      if (n % 20 == 0) write();
    }

    private void write() {
      long[] sorted = Arrays.copyOf(micros, n);
      Arrays.sort(sorted);
      String json = String.format("{\"count\":%d,\"p50Us\":%d,\"p90Us\":%d,\"p99Us\":%d}", n,
          sorted[n / 2], sorted[n * 9 / 10], sorted[Math.min(n - 1, n * 99 / 100)]);
      try {
        Path tmp = Paths.get(LATENCY_FILE + ".tmp");
        Files.write(tmp, json.getBytes(StandardCharsets.UTF_8));
        Files.move(tmp, Paths.get(LATENCY_FILE), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException e) {
        System.err.println("keeper-am: cannot write " + LATENCY_FILE + ": " + e);
      }
    }
  }

  public static void main(String[] args) throws Exception {
    int workers = Integer.parseInt(args[0]);
    int proxyPort = Integer.parseInt(args[1]);
    List<String> own = args.length > 2 && !args[2].isEmpty() ? Arrays.asList(args[2].split(",")) : List.of();
    String nmHost = System.getenv(ApplicationConstants.Environment.NM_HOST.name());
    long launcher = Long.getLong(LAUNCHER_PID, 0L);
    FollowProcess.haltWhenGone(launcher, 1000, "keeper-am: launcher");
    String worker = workerCommand(launcher);

    YarnConfiguration conf = new YarnConfiguration();
    // The AMRMProxy listens on every NodeManager; an AM reaches the one on its own host.
    conf.set(YarnConfiguration.RM_SCHEDULER_ADDRESS, nmHost + ":" + proxyPort);
    // While its NodeManager restarts the proxy refuses connections: the AMRMClient's retry policy
    // (RMProxy) waits the retry interval between tries, 30 s by default; a test waits less.
    conf.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, 250);
    conf.setInt("ipc.client.connect.max.retries", 0);

    Set<ContainerId> running = ConcurrentHashMap.newKeySet();
    CountDownLatch forever = new CountDownLatch(1);
    final NMClientAsync[] nm = new NMClientAsync[1];
    final AMRMClientAsync<ContainerRequest>[] rm = new AMRMClientAsync[1];

    AMRMClientAsync.AbstractCallbackHandler handler = new AMRMClientAsync.AbstractCallbackHandler() {
      @Override
      public void onContainersCompleted(List<ContainerStatus> statuses) {
        for (ContainerStatus s : statuses) {
          if (running.remove(s.getContainerId())) {
            System.err.println("keeper-am: worker " + s.getContainerId() + " completed (" + s.getExitStatus() + "): asking for a replacement");
            rm[0].addContainerRequest(new ContainerRequest(WORKER, null, null, PRIORITY));
          }
        }
      }

      @Override
      public void onContainersAllocated(List<Container> containers) {
        for (Container c : containers) {
          rm[0].removeContainerRequest(new ContainerRequest(WORKER, null, null, PRIORITY));
          if (running.size() >= workers) {
            rm[0].releaseAssignedContainer(c.getId());
            continue;
          }
          running.add(c.getId());
          ContainerLaunchContext clc = ContainerLaunchContext.newInstance(
              Collections.emptyMap(), Collections.emptyMap(), List.of(worker),
              Collections.emptyMap(), (ByteBuffer) null, Collections.emptyMap());
          nm[0].startContainerAsync(c, clc);
        }
      }

      @Override
      public void onContainersUpdated(List<UpdatedContainer> containers) {}

      @Override
      public void onShutdownRequest() {
        forever.countDown();
      }

      @Override
      public void onNodesUpdated(List<NodeReport> updatedNodes) {}

      @Override
      public float getProgress() {
        return 0.5f;
      }

      @Override
      public void onError(Throwable e) {
        System.err.println("keeper-am: AMRM client error: " + e);
        forever.countDown();
      }
    };

    nm[0] = NMClientAsync.createNMClientAsync(new NMClientAsync.AbstractCallbackHandler() {
      public void onContainerStarted(ContainerId id, Map<String, ByteBuffer> r) {}
      public void onContainerStatusReceived(ContainerId id, ContainerStatus s) {}
      public void onContainerStopped(ContainerId id) {}
      public void onStartContainerError(ContainerId id, Throwable t) {
        System.err.println("keeper-am: start of " + id + " failed: " + t);
      }
      public void onContainerResourceIncreased(ContainerId id, Resource r) {}
      public void onContainerResourceUpdated(ContainerId id, Resource r) {}
      public void onGetContainerStatusError(ContainerId id, Throwable t) {}
      public void onIncreaseContainerResourceError(ContainerId id, Throwable t) {}
      public void onUpdateContainerResourceError(ContainerId id, Throwable t) {}
      public void onStopContainerError(ContainerId id, Throwable t) {}
    });
    nm[0].init(conf);
    nm[0].start();

    rm[0] = AMRMClientAsync.createAMRMClientAsync(new TimedClient(), 200, handler);
    rm[0].init(conf);
    rm[0].start();
    RegisterApplicationMasterResponse reg = rm[0].registerApplicationMaster(nmHost, 0, "");
    List<Container> previous = reg.getContainersFromPreviousAttempts() == null ? new ArrayList<>() : reg.getContainersFromPreviousAttempts();
    for (Container c : previous) running.add(c.getId());
    System.err.println("keeper-am: registered via " + nmHost + ":" + proxyPort + "; " + previous.size() + " worker(s) from earlier attempts");
    // AMRMClientImpl#updateBlacklist mutates the lists it is given: pass mutable ones.
    if (!own.isEmpty()) rm[0].updateBlacklist(new ArrayList<>(own), new ArrayList<>());
    for (int i = running.size(); i < workers; i++) {
      rm[0].addContainerRequest(new ContainerRequest(WORKER, null, null, PRIORITY));
    }
    forever.await();
    System.exit(1);
  }
}
