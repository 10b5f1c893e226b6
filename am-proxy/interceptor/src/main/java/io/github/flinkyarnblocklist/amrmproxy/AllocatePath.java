package io.github.flinkyarnblocklist.amrmproxy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.ResourceBlacklistRequest;
import org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.nodemanager.amrmproxy.RequestInterceptor;

/**
 * An opted-in AM's allocate as the RM gets it: the change of the owners' union in place of the
 * AM's own blacklist delta, the HTTP clients' releases added; the answer's containers recorded
 * and the state stored after it.
 */
final class AllocatePath {
  private AllocatePath() {}

  static AllocateResponse allocate(ProxyState state, AttemptStore store, RequestInterceptor next, AllocateRequest request)
      throws YarnException, IOException {
    List<ContainerId> amReleases = request.getReleaseList() == null ? Collections.<ContainerId>emptyList() : request.getReleaseList();
    Outgoing out = state.beforeAllocate(ownAdditions(request), ownRemovals(request), ids(amReleases), request.getResponseId());
    request.setResourceBlacklistRequest(ResourceBlacklistRequest.newInstance(out.blacklistAdditions, out.blacklistRemovals));
    if (!out.releases.isEmpty()) {
      LinkedHashSet<ContainerId> release = new LinkedHashSet<>(amReleases);
      for (String id : out.releases) release.add(ContainerId.fromString(id));
      request.setReleaseList(new ArrayList<>(release));
    }
    AllocateResponse resp;
    try {
      resp = next.allocate(request);
    } catch (ApplicationMasterNotRegisteredException e) {
      state.allocateFailed(out, true);
      store.store(state);
      throw e;
    } catch (YarnException | IOException | RuntimeException e) {
      state.allocateFailed(out, false);
      store.store(state);
      throw e;
    }
    RingChange ring = state.afterAllocate(out, allocated(resp), finished(resp), System.currentTimeMillis());
    store.store(state);
    store.storeRing(ring);
    return resp;
  }

  private static List<String> ownAdditions(AllocateRequest r) {
    ResourceBlacklistRequest own = r.getResourceBlacklistRequest();
    return own == null || own.getBlacklistAdditions() == null ? Collections.<String>emptyList() : own.getBlacklistAdditions();
  }

  private static List<String> ownRemovals(AllocateRequest r) {
    ResourceBlacklistRequest own = r.getResourceBlacklistRequest();
    return own == null || own.getBlacklistRemovals() == null ? Collections.<String>emptyList() : own.getBlacklistRemovals();
  }

  private static List<String> ids(List<ContainerId> ids) {
    List<String> out = new ArrayList<>();
    for (ContainerId id : ids) out.add(id.toString());
    return out;
  }

  private static List<Live> allocated(AllocateResponse resp) {
    List<Live> out = new ArrayList<>();
    if (resp.getAllocatedContainers() != null) {
      for (Container c : resp.getAllocatedContainers()) out.add(live(c));
    }
    return out;
  }

  private static List<Finished> finished(AllocateResponse resp) {
    List<Finished> out = new ArrayList<>();
    if (resp.getCompletedContainersStatuses() != null) {
      for (ContainerStatus s : resp.getCompletedContainersStatuses()) {
        out.add(new Finished(s.getContainerId().toString(), s.getExitStatus(), s.getDiagnostics()));
      }
    }
    return out;
  }

  static Live live(Container c) {
    return new Live(c.getId().toString(), c.getNodeId().toString(),
        c.getNodeHttpAddress() == null ? "" : c.getNodeHttpAddress(), "RUNNING");
  }
}
