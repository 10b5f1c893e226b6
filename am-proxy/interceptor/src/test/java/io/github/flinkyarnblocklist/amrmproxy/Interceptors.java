package io.github.flinkyarnblocklist.amrmproxy;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.protocolrecords.FinishApplicationMasterRequest;
import org.apache.hadoop.yarn.api.protocolrecords.FinishApplicationMasterResponse;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterRequest;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterResponse;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.security.ContainerTokenIdentifier;
import org.apache.hadoop.yarn.server.api.ContainerType;
import org.apache.hadoop.yarn.server.nodemanager.amrmproxy.AbstractRequestInterceptor;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.container.Container;
import org.apache.hadoop.yarn.util.Records;

/** Test doubles of what surrounds the interceptor in a NodeManager: the RM side of the pipeline, its containers. */
final class Interceptors {
  private Interceptors() {}

  /** The rest of the pipeline: answers every call at once and keeps the allocate requests it got. */
  static class FakeRm extends AbstractRequestInterceptor {
    final List<AllocateRequest> allocates = new ArrayList<>();
    List<org.apache.hadoop.yarn.api.records.Container> fromPreviousAttempts = new ArrayList<>();

    @Override
    public RegisterApplicationMasterResponse registerApplicationMaster(RegisterApplicationMasterRequest r) {
      RegisterApplicationMasterResponse resp = Records.newRecord(RegisterApplicationMasterResponse.class);
      resp.setContainersFromPreviousAttempts(fromPreviousAttempts);
      return resp;
    }

    @Override
    public FinishApplicationMasterResponse finishApplicationMaster(FinishApplicationMasterRequest r) {
      return FinishApplicationMasterResponse.newInstance(true);
    }

    @Override
    public AllocateResponse allocate(AllocateRequest r) {
      allocates.add(r);
      return Records.newRecord(AllocateResponse.class);
    }
  }

  static ContainerTokenIdentifier token(ContainerId id, ContainerType type) {
    return new ContainerTokenIdentifier(id, "nm1:8041", "flink", Resource.newInstance(256, 1), 0L, 0, 0L,
        Priority.newInstance(0), 0L, null, "", type);
  }

  /** A NodeManager container of the attempt, of that type; an AM opted in has BLOCKLIST_AMRM_PROXY=true. */
  static Container nmContainer(ApplicationAttemptId a, long number, ContainerType type, boolean optedIn) {
    ContainerId id = ContainerId.newContainerId(a, number);
    ContainerTokenIdentifier t = token(id, type);
    Map<String, String> env = optedIn ? Map.of(AmContainer.OPT_IN_ENV, "true") : Map.of("JAVA_HOME", "/usr");
    ContainerLaunchContext clc = ContainerLaunchContext.newInstance(null, env, null, null, null, null);
    return (Container) Proxy.newProxyInstance(Container.class.getClassLoader(), new Class<?>[] {Container.class}, (p, m, x) -> switch (m.getName()) {
      case "getContainerId" -> id;
      case "getContainerTokenIdentifier" -> t;
      case "getLaunchContext" -> clc;
      default -> null;
    });
  }
}
