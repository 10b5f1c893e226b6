package io.github.flinkyarnblocklist.amrmproxy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.container.Container;
import org.apache.hadoop.yarn.server.nodemanager.recovery.NMStateStoreService;
import org.apache.hadoop.yarn.server.nodemanager.recovery.RecoveryIterator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a pipeline the NodeManager's recovery rebuilt still fronts a live attempt, looked at
 * again for a while: a NodeManager restarted while an earlier attempt's AM container was being
 * stopped rebuilds that attempt as live, and the container's end comes seconds later.
 */
final class Liveness {
  private static final Logger LOG = LoggerFactory.getLogger(Liveness.class);
  static final long RECHECK_MS = 5_000;
  static final int RECHECKS = 24;
  /** One daemon thread for every pipeline's re-checks (a check is a scan of this NodeManager's container states). */
  private static final ScheduledExecutorService RECHECKER = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "blocklist-amrm-recheck");
    t.setDaemon(true);
    return t;
  });

  private ScheduledFuture<?> rechecks;
  private int left;

  /** Runs {@code check} every RECHECK_MS, RECHECKS times at most, until {@link #cancel()}. */
  synchronized void schedule(Runnable check) {
    left = RECHECKS;
    rechecks = RECHECKER.scheduleWithFixedDelay(() -> {
      try {
        check.run();
      } catch (RuntimeException e) {
        LOG.warn("blocklist AMRM proxy: re-check failed: {}", e.toString());
      }
    }, RECHECK_MS, RECHECK_MS, TimeUnit.MILLISECONDS);
  }

  /** Counts one re-check down; false (and cancelled) once none is left. */
  synchronized boolean take() {
    if (--left >= 0) return true;
    cancel();
    return false;
  }

  synchronized void cancel() {
    if (rechecks != null) rechecks.cancel(false);
    rechecks = null;
    left = 0;
  }

  /**
   * Why the attempt fronts nothing live here, or null when it may. The NodeManager recovers its
   * containers before the AMRMProxy and keeps one until the RM has heard of its end: a later
   * attempt's container here means this one was superseded; no AM container of it here, or one
   * the state store records as completed or killed, means its AM is gone. With no context to
   * look at it is taken as live.
   */
  static String notLiveHere(ApplicationAttemptId attempt, Context nm) {
    if (nm == null || nm.getContainers() == null) return null;
    List<ContainerId> ams = new ArrayList<>();
    for (Container c : nm.getContainers().values()) {
      ContainerId id = c.getContainerId();
      if (id == null || !id.getApplicationAttemptId().getApplicationId().equals(attempt.getApplicationId())) continue;
      if (id.getApplicationAttemptId().getAttemptId() > attempt.getAttemptId()) {
        return "a later attempt (" + id.getApplicationAttemptId() + ") has containers here";
      }
      if (id.getApplicationAttemptId().equals(attempt) && AmContainer.isAm(c)) ams.add(id);
    }
    if (ams.isEmpty()) return "its AM container is no longer on this NodeManager";
    NMStateStoreService nmss = nm.getNMStateStore();
    if (nmss == null || !nmss.canRecover()) return null;
    int ended;
    try {
      ended = endedInStore(nmss, ams);
    } catch (IOException | RuntimeException e) {
      LOG.warn("blocklist AMRM proxy for {}: cannot read the NodeManager's container states ({}); taken as live", attempt, e.toString());
      return null;
    }
    return ended == ams.size() ? "its AM container " + ams.get(0) + " has ended (completed or killed in the state store)" : null;
  }

  private static int endedInStore(NMStateStoreService nmss, List<ContainerId> ams) throws IOException {
    int ended = 0;
    try (RecoveryIterator<NMStateStoreService.RecoveredContainerState> it = nmss.getContainerStateIterator()) {
      while (it.hasNext()) {
        NMStateStoreService.RecoveredContainerState rcs = it.next();
        if (ams.contains(rcs.getContainerId())
            && (rcs.getStatus() == NMStateStoreService.RecoveredContainerStatus.COMPLETED || rcs.getKilled())) {
          ended++;
        }
      }
    }
    return ended;
  }
}
