package io.github.flinkyarnblocklist.amrmproxy;

import java.io.IOException;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Token;
import org.apache.hadoop.yarn.security.ContainerTokenIdentifier;
import org.apache.hadoop.yarn.server.api.ContainerType;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.container.Container;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;

/**
 * An attempt's AM container as this NodeManager runs it, known by the type in its container token
 * (never by its number: after a work-preserving RM restart a worker can be numbered 1 too).
 */
final class AmContainer {
  /** The AM container's environment variable that opts an application in; its value must be "true". */
  static final String OPT_IN_ENV = "BLOCKLIST_AMRM_PROXY";

  private final Container container;

  private AmContainer(Container container) {
    this.container = container;
  }

  /** The attempt's AM container in the NodeManager's context, or null when none is there (yet). */
  static AmContainer find(Context nm, ApplicationAttemptId attempt) {
    if (nm == null || nm.getContainers() == null) return null;
    for (Container c : nm.getContainers().values()) {
      ContainerId id = c.getContainerId();
      if (id != null && id.getApplicationAttemptId().equals(attempt) && isAm(c)) return new AmContainer(c);
    }
    return null;
  }

  ContainerId id() {
    return container.getContainerId();
  }

  /** Whether the AM asked for the blocklist: BLOCKLIST_AMRM_PROXY=true in its launch context. */
  boolean optsIn() {
    ContainerLaunchContext clc = container.getLaunchContext();
    Map<String, String> env = clc == null ? null : clc.getEnvironment();
    String v = env == null ? null : env.get(OPT_IN_ENV);
    return v != null && v.trim().equalsIgnoreCase("true");
  }

  /** A NodeManager's container is an AM's when its token says so. */
  static boolean isAm(Container c) {
    ContainerTokenIdentifier t = c.getContainerTokenIdentifier();
    return t != null && t.getContainerType() == ContainerType.APPLICATION_MASTER;
  }

  /**
   * Whether a container the RM hands over (an allocate's or a registration's) is an AM's, read
   * from its container token; false when it carries none that can be read.
   */
  static boolean isAm(org.apache.hadoop.yarn.api.records.Container c) {
    Token token = c.getContainerToken();
    if (token == null || token.getIdentifier() == null) return false;
    try {
      ContainerTokenIdentifier t = BuilderUtils.newContainerTokenIdentifier(token);
      return t != null && t.getContainerType() == ContainerType.APPLICATION_MASTER;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }
}
