package io.github.flinkyarnblocklist.flinkyarn;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.apache.flink.api.common.JobID;
import org.apache.flink.client.deployment.ClusterSpecification;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.yarn.YarnClientYarnClusterInformationRetriever;
import org.apache.flink.yarn.YarnClusterClientFactory;
import org.apache.flink.yarn.YarnClusterDescriptor;
import org.apache.flink.yarn.configuration.YarnConfigOptionsInternal;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * An unmodified Flink session cluster deployed into the MiniYARNCluster by Flink's own
 * YarnClusterDescriptor, as `yarn-session.sh` does it, with the configuration a user would give
 * (the keys the test passes, docs/deploy.md's) on top of the rig's own sizing.
 */
final class FlinkSession {
  /** The rig's sizes (a user's keys may change them: the rig reads the sizes YARN gave). */
  static final int JM_MB = 768;
  static final int TM_MB = 1024;
  /** Until Flink's AM runs: room for it on any node. */
  static final int START_NODE_MB = 8192;

  private final Path work;
  private final YarnConfiguration yarnConf;
  private final YarnClient yarn;
  private ClusterClient<ApplicationId> client;
  private ApplicationId appId;

  FlinkSession(Path work, YarnConfiguration yarnConf) {
    this.work = work;
    this.yarnConf = yarnConf;
    this.yarn = YarnClient.createYarnClient();
    yarn.init(yarnConf);
    yarn.start();
  }

  YarnClient yarn() {
    return yarn;
  }

  ApplicationId applicationId() {
    return appId;
  }

  ClusterClient<ApplicationId> client() {
    return client;
  }

  /**
   * The rig's part of the configuration: small processes, the hosts file in every JVM, logs to
   * the container's log dir. `user` (the test's keys) comes on top.
   */
  Configuration configuration(String hostsFile, Map<String, String> user) throws IOException {
    Configuration c = new Configuration();
    c.setString("execution.target", "yarn-session");
    c.setString("jobmanager.memory.process.size", JM_MB + "m");
    c.setString("jobmanager.memory.jvm-metaspace.size", "128m");
    c.setString("taskmanager.memory.process.size", TM_MB + "m");
    c.setString("taskmanager.memory.managed.size", "32m");
    c.setString("taskmanager.memory.jvm-metaspace.size", "128m");
    c.setString("taskmanager.numberOfTaskSlots", "1");
    c.setString("yarn.application.name", "blocklist-flink-session");
    // Without HA Flink asks YARN for one attempt only; the failover check needs a second.
    c.setString("yarn.application-attempts", "4");
    c.setString("env.java.opts.all", "-Djdk.net.hosts.file=" + hostsFile + " -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto");
    c.setString("yarn.flink-dist-jar", distJar().toString());
    c.setString(YarnConfigOptionsInternal.APPLICATION_LOG_CONFIG_FILE.key(), logConfig().toString());
    c.setString("yarn.staging-directory", work.resolve("staging").toUri().toString());
    // Speculative execution for batch jobs (Jobs.slowBatch): a slow attempt's node is blocked for an
    // hour once the other subtask of two finished and it ran 1 s longer than 1.5x that one's time.
    c.setString("execution.batch.speculative.enabled", "true");
    c.setString("execution.batch.speculative.block-slow-node-duration", "1 h");
    c.setString("slow-task-detector.execution-time.baseline-ratio", "0.5");
    c.setString("slow-task-detector.execution-time.baseline-lower-bound", "1 s");
    for (Map.Entry<String, String> e : user.entrySet()) c.setString(e.getKey(), e.getValue());
    return c;
  }

  /** Deploys the session (yarn-session.sh's path) and waits until its REST endpoint answers. */
  void deploy(Configuration flinkConf) throws Exception {
    YarnClusterDescriptor d = new YarnClusterDescriptor(flinkConf, yarnConf, yarn,
        YarnClientYarnClusterInformationRetriever.create(yarn), true);
    // Sized from the configuration as yarn-session.sh sizes it (jobmanager/taskmanager.memory.process.size).
    ClusterSpecification spec = new YarnClusterClientFactory().getClusterSpecification(flinkConf);
    client = d.deploySessionCluster(spec).getClusterClient();
    appId = client.getClusterId();
  }

  /** A TaskManager container's memory as YARN sizes it: Flink's process size, rounded up to the scheduler's 64 MB steps. */
  static int taskManagerMb(Configuration flinkConf) {
    long mb = flinkConf.get(org.apache.flink.configuration.TaskManagerOptions.TOTAL_PROCESS_MEMORY).getMebiBytes();
    return (int) ((mb + 63) / 64 * 64);
  }

  JobID submit(JobGraph g) throws Exception {
    return client.submitJob(g).get();
  }

  /**
   * Flink's dist jar: no classes, a manifest whose Class-Path names this JVM's own class path (the
   * rig's classes with the job, Flink's and Hadoop's client jars in the local Maven repository).
   * The containers run on this machine, so the absolute paths hold there; a copy of 180 jars in
   * every container directory is what this saves.
   */
  private Path distJar() throws IOException {
    List<String> urls = new ArrayList<>();
    for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (e.isEmpty()) continue;
      urls.add(Path.of(e).toAbsolutePath().toUri().toString());
    }
    Manifest m = new Manifest();
    m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    m.getMainAttributes().put(Attributes.Name.CLASS_PATH, String.join(" ", urls));
    Path jar = work.resolve("flink-dist-rig.jar");
    try (OutputStream o = Files.newOutputStream(jar); JarOutputStream j = new JarOutputStream(o, m)) {
      j.flush();
    }
    return jar;
  }

  /** Flink's containers log through Hadoop's reload4j binding here: log4j 1 syntax, to Flink's log file. */
  private Path logConfig() throws IOException {
    Path f = work.resolve("log4j.properties");
    Files.writeString(f, String.join("\n",
        "log4j.rootLogger=INFO, file",
        "log4j.appender.file=org.apache.log4j.FileAppender",
        "log4j.appender.file.file=${log.file}",
        "log4j.appender.file.layout=org.apache.log4j.PatternLayout",
        "log4j.appender.file.layout.ConversionPattern=%d{HH:mm:ss,SSS} %-5p %c{1}: %m%n",
        "log4j.logger.org.apache.hadoop=WARN",
        "log4j.logger.org.apache.flink.runtime.checkpoint=WARN",
        "log4j.logger.org.apache.pekko=WARN",
        ""), StandardCharsets.UTF_8);
    return f;
  }
}
