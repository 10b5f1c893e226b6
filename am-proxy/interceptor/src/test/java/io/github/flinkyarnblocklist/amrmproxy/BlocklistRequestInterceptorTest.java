package io.github.flinkyarnblocklist.amrmproxy;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.Token;
import org.apache.hadoop.yarn.security.ContainerTokenIdentifier;
import org.apache.hadoop.yarn.server.api.ContainerType;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.junit.jupiter.api.Test;

class BlocklistRequestInterceptorTest {
  private static final ApplicationId APP = ApplicationId.newInstance(1652313600000L, 1);
  private static final ApplicationAttemptId FIRST = ApplicationAttemptId.newInstance(APP, 1);
  private static final ApplicationAttemptId SECOND = ApplicationAttemptId.newInstance(APP, 2);

  private static org.apache.hadoop.yarn.api.records.Container handedOver(ContainerId id, ContainerType type) {
    ContainerTokenIdentifier t = Interceptors.token(id, type);
    Token token = BuilderUtils.newContainerToken(NodeId.newInstance("127.0.0.1", 8041), new byte[0], t);
    return org.apache.hadoop.yarn.api.records.Container.newInstance(id, NodeId.newInstance("nm1", 8041), "nm1:8042",
        Resource.newInstance(256, 1), Priority.newInstance(0), token);
  }

  @Test
  void theEarlierAttemptsAmContainerIsToldApartFromItsWorkersByItsTokenNotItsNumber() {
    assertTrue(BlocklistRequestInterceptor.isPreviousAttemptsAm(handedOver(ContainerId.newContainerId(FIRST, 1), ContainerType.APPLICATION_MASTER), SECOND));
    assertFalse(BlocklistRequestInterceptor.isPreviousAttemptsAm(handedOver(ContainerId.newContainerId(FIRST, 2), ContainerType.TASK), SECOND), "a worker");
    assertFalse(BlocklistRequestInterceptor.isPreviousAttemptsAm(handedOver(ContainerId.newContainerId(SECOND, 1), ContainerType.APPLICATION_MASTER), SECOND),
        "the current AM (the RM leaves it out anyway)");
    // After a work-preserving RM restart a worker can be numbered 1 under the RM's new epoch.
    long epoch = 17L << 40;
    assertFalse(BlocklistRequestInterceptor.isPreviousAttemptsAm(handedOver(ContainerId.newContainerId(FIRST, epoch | 1), ContainerType.TASK), SECOND),
        "a worker numbered 1 is a worker");
    assertTrue(BlocklistRequestInterceptor.isPreviousAttemptsAm(handedOver(ContainerId.newContainerId(FIRST, epoch | 3), ContainerType.APPLICATION_MASTER), SECOND));
    org.apache.hadoop.yarn.api.records.Container noToken = handedOver(ContainerId.newContainerId(FIRST, 1), ContainerType.APPLICATION_MASTER);
    noToken.setContainerToken(null);
    assertFalse(BlocklistRequestInterceptor.isPreviousAttemptsAm(noToken, SECOND), "no token: taken as a worker");
  }
}
