package io.github.flinkyarnblocklist.amrmproxy;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.junit.jupiter.api.Test;

class BlocklistRequestInterceptorTest {
  private static final ApplicationId APP = ApplicationId.newInstance(1652313600000L, 1);
  private static final ApplicationAttemptId FIRST = ApplicationAttemptId.newInstance(APP, 1);
  private static final ApplicationAttemptId SECOND = ApplicationAttemptId.newInstance(APP, 2);

  @Test
  void theEarlierAttemptsAmContainerIsToldApartFromItsWorkers() {
    assertTrue(BlocklistRequestInterceptor.isPreviousAttemptsAm(ContainerId.newContainerId(FIRST, 1), SECOND));
    assertFalse(BlocklistRequestInterceptor.isPreviousAttemptsAm(ContainerId.newContainerId(FIRST, 2), SECOND), "a worker");
    assertFalse(BlocklistRequestInterceptor.isPreviousAttemptsAm(ContainerId.newContainerId(SECOND, 1), SECOND), "the current AM (the RM leaves it out anyway)");
    // After an RM restart the container numbers carry the RM's epoch in their high bits.
    long epoch = 17L << 40;
    assertTrue(BlocklistRequestInterceptor.isPreviousAttemptsAm(ContainerId.newContainerId(FIRST, epoch | 1), SECOND));
    assertFalse(BlocklistRequestInterceptor.isPreviousAttemptsAm(ContainerId.newContainerId(FIRST, epoch | 3), SECOND));
  }
}
