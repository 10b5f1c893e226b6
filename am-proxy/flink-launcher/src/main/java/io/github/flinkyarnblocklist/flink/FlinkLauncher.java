package io.github.flinkyarnblocklist.flink;

import java.net.URI;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.graph.StreamGraph;

/**
 * Test tool: a Flink MiniCluster (3 task managers, 1 slot each) with its real REST endpoint on
 * 127.0.0.1, running two small jobs that fail on purpose in chosen subtasks (each subtask of a
 * parallelism-3 job runs on its own task manager, so a subtask names a task manager):
 * <ul>
 *   <li>"flaky": subtask 1 throws in its first two attempts, then the job runs on (RUNNING, with an
 *       exception history);</li>
 *   <li>"doomed": subtasks 0 and 2 throw in every attempt until the restart strategy gives up
 *       (FAILED).</li>
 * </ul>
 * Prints one JSON line {rest, jobs:{flaky, doomed}, flinkVersion, startupMs} once the flaky job has
 * recovered and the doomed one has failed; ends when stdin closes.
 */
public final class FlinkLauncher {
  public static void main(String[] args) throws Exception {
    long t0 = System.currentTimeMillis();
    Configuration conf = new Configuration();
    conf.set(RestOptions.ADDRESS, "127.0.0.1");
    conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
    conf.set(RestOptions.BIND_PORT, "0");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
    MiniCluster mc = new MiniCluster(new MiniClusterConfiguration.Builder()
        .setConfiguration(conf)
        .setNumTaskManagers(3)
        .setNumSlotsPerTaskManager(1)
        .build());
    mc.start();
    URI rest = mc.getRestAddress().get(60, TimeUnit.SECONDS);

    // One after the other: each needs all three slots (one per task manager).
    long deadline = System.currentTimeMillis() + 120_000;
    JobID doomed = mc.submitJob(job("doomed", Set.of(0, 2), Integer.MAX_VALUE)).get().getJobID();
    while (mc.getJobStatus(doomed).get() != JobStatus.FAILED) {
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("the doomed job did not fail");
      Thread.sleep(100);
    }
    JobID flaky = mc.submitJob(job("flaky", Set.of(1), 2)).get().getJobID();
    // The flaky job is RUNNING again once subtask 1's third attempt runs.
    while (mc.getJobStatus(flaky).get() != JobStatus.RUNNING || !Failer.recovered) {
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("the flaky job did not recover");
      Thread.sleep(100);
    }
    System.out.println("{\"rest\":\"http://127.0.0.1:" + rest.getPort() + "\",\"jobs\":{\"flaky\":\"" + flaky
        + "\",\"doomed\":\"" + doomed + "\"},\"flinkVersion\":\"" + org.apache.flink.runtime.util.EnvironmentInformation.getVersion()
        + "\",\"startupMs\":" + (System.currentTimeMillis() - t0) + "}");
    System.out.flush();
    while (System.in.read() >= 0) {
      // keep running until the harness closes stdin
    }
    mc.close();
    System.exit(0);
  }

  /** A JobGraph (not a StreamGraph): MiniCluster#submitJob takes one in Flink 1.20 and 2.x alike. */
  private static JobGraph job(String name, Set<Integer> failingSubtasks, int failingAttempts) {
    Configuration jobConf = new Configuration();
    jobConf.set(PipelineOptions.NAME, name);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(jobConf);
    env.setParallelism(3);
    env.fromSequence(0, Long.MAX_VALUE).name(name + "-numbers")
        .map(new Failer(name, failingSubtasks, failingAttempts)).name(name + "-failer")
        .sinkTo(new DiscardingSink<>());
    StreamGraph g = env.getStreamGraph();
    return g.getJobGraph(FlinkLauncher.class.getClassLoader(), new JobID());
  }

  /** Throws in chosen subtasks for their first attempts; slow on purpose so 3 jobs' tasks stay cheap on 2 cores. */
  static final class Failer extends RichMapFunction<Long, Long> {
    static volatile boolean recovered;
    private final String job;
    private final Set<Integer> subtasks;
    private final int attempts;
    private transient boolean failHere;
    private transient long seen;

    Failer(String job, Set<Integer> subtasks, int attempts) {
      this.job = job;
      this.subtasks = subtasks;
      this.attempts = attempts;
    }

    @Override
    public void open(OpenContext ctx) {
      int sub = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
      int attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
      failHere = subtasks.contains(sub) && attempt < attempts;
      if (!failHere && attempt >= 2 && job.equals("flaky")) recovered = true;
    }

    @Override
    public Long map(Long v) throws Exception {
      Thread.sleep(20);
      if (failHere && ++seen >= 3) {
        throw new IllegalStateException("blocklist test: " + job + " fails on purpose in subtask "
            + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() + ", attempt "
            + getRuntimeContext().getTaskInfo().getAttemptNumber());
      }
      return v;
    }
  }
}
