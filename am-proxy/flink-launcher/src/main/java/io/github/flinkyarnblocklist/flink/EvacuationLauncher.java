package io.github.flinkyarnblocklist.flink;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.taskexecutor.TaskExecutor;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/**
 * Test tool for evacuations against a real JobManager: a Flink MiniCluster whose task managers a
 * harness "releases" as YARN would (the task manager shuts down, Flink fails the job over; a
 * replacement starts after a delay, as YARN's next allocation), running
 * <ul>
 *   <li>"evac-stream": a checkpointed streaming job (a sequence source whose position is in its
 *       checkpoints, a rate-limited map chained to it that counts records and those it has seen
 *       before — the replay after a restore —, a keyBy so that the job is one pipelined region);</li>
 *   <li>with {@code --batch}: "evac-batch", a batch job whose second stage reads the first one's
 *       blocking result partitions for a while (the REST shapes of a running batch job).</li>
 * </ul>
 * Arguments: {@code --tms N --slots N --parallelism N --interval-ms N --sleep-ms N --replace-ms N [--batch]}.
 * Prints one JSON line {rest, stream, batch?, flinkVersion, taskManagers} when the stream job runs;
 * then answers stdin lines: {@code release <tm id>}, {@code stats}, {@code reset}, {@code tms}
 * (one JSON line each). Ends when stdin closes.
 */
public final class EvacuationLauncher {
  private static final ScheduledExecutorService LATER = Executors.newSingleThreadScheduledExecutor();

  public static void main(String[] args) throws Exception {
    int tms = intArg(args, "--tms", 4);
    int slots = intArg(args, "--slots", 1);
    int parallelism = intArg(args, "--parallelism", 3);
    long interval = intArg(args, "--interval-ms", 10_000);
    long sleepMs = intArg(args, "--sleep-ms", 1);
    long replaceMs = intArg(args, "--replace-ms", 1000);
    boolean batch = hasArg(args, "--batch");
    Configuration conf = new Configuration();
    conf.set(RestOptions.ADDRESS, "127.0.0.1");
    conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
    conf.set(RestOptions.BIND_PORT, "0");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, Integer.MAX_VALUE);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(500));
    MiniCluster mc = new MiniCluster(new MiniClusterConfiguration.Builder().setConfiguration(conf).setNumTaskManagers(tms).setNumSlotsPerTaskManager(slots).build());
    mc.start();
    URI rest = mc.getRestAddress().get(60, TimeUnit.SECONDS);
    JobID stream = mc.submitJob(streamJob(parallelism, interval, sleepMs)).get().getJobID();
    JobID batchJob = batch ? mc.submitJob(batchJob(2)).get().getJobID() : null;
    long deadline = System.currentTimeMillis() + 120_000;
    while (!Counting.running()) {
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("the stream job did not start");
      Thread.sleep(100);
    }
    System.out.println("{\"rest\":\"http://127.0.0.1:" + rest.getPort() + "\",\"stream\":\"" + stream + "\"" + (batchJob != null ? ",\"batch\":\"" + batchJob + "\"" : "")
        + ",\"flinkVersion\":\"" + org.apache.flink.runtime.util.EnvironmentInformation.getVersion() + "\",\"taskManagers\":" + ids(mc) + "}");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) answer(mc, line.trim(), replaceMs);
    try {
      mc.closeAsync().get(10, TimeUnit.SECONDS);
    } finally {
      System.exit(0);
    }
  }

  private static void answer(MiniCluster mc, String line, long replaceMs) throws Exception {
    if (line.startsWith("release ")) {
      String id = line.substring("release ".length()).trim();
      int index = indexOf(mc, id);
      if (index < 0) {
        say("{\"unknown\":\"" + id + "\"}");
        return;
      }
      mc.terminateTaskManager(index);
      say("{\"released\":\"" + id + "\"}");
      LATER.schedule(() -> {
        try {
          mc.startTaskManager();
          say("{\"started\":true,\"taskManagers\":" + ids(mc) + "}");
        } catch (Exception e) {
          say("{\"error\":\"" + e.getMessage().replace('"', '\'') + "\"}");
        }
      }, replaceMs, TimeUnit.MILLISECONDS);
    } else if (line.equals("stats")) {
      say("{\"processed\":" + Counting.PROCESSED.get() + ",\"replayed\":" + Counting.REPLAYED.get() + "}");
    } else if (line.equals("reset")) {
      Counting.PROCESSED.set(0);
      Counting.REPLAYED.set(0);
      say("{\"reset\":true}");
    } else if (line.equals("tms")) {
      say("{\"taskManagers\":" + ids(mc) + "}");
    }
  }

  private static synchronized void say(String json) {
    System.out.println(json);
    System.out.flush();
  }

  @SuppressWarnings("unchecked")
  private static List<TaskExecutor> taskExecutors(MiniCluster mc) throws Exception {
    Field f = MiniCluster.class.getDeclaredField("taskManagers");
    f.setAccessible(true);
    return (List<TaskExecutor>) f.get(mc);
  }

  /** The live task managers' resource ids (what GET /taskmanagers lists as `id`). */
  private static String ids(MiniCluster mc) throws Exception {
    List<String> out = new ArrayList<>();
    for (TaskExecutor te : taskExecutors(mc)) if (!te.getTerminationFuture().isDone()) out.add("\"" + te.getResourceID() + "\"");
    return "[" + String.join(",", out) + "]";
  }

  private static int indexOf(MiniCluster mc, String id) throws Exception {
    List<TaskExecutor> all = taskExecutors(mc);
    for (int i = 0; i < all.size(); i++) if (all.get(i).getResourceID().toString().equals(id) && !all.get(i).getTerminationFuture().isDone()) return i;
    return -1;
  }

  private static JobGraph streamJob(int parallelism, long interval, long sleepMs) {
    Configuration c = new Configuration();
    c.set(PipelineOptions.NAME, "evac-stream");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(c);
    env.setParallelism(parallelism);
    env.enableCheckpointing(interval);
    env.fromSequence(0, Long.MAX_VALUE).name("evac-numbers")
        .map(new Counting(parallelism, sleepMs)).name("evac-count")
        .keyBy(v -> v % 97).map(v -> v).name("evac-keyed")
        .sinkTo(new DiscardingSink<>());
    return env.getStreamGraph().getJobGraph(EvacuationLauncher.class.getClassLoader(), new JobID());
  }

  /** A batch job whose second stage runs long after the first one has written its partitions. */
  private static JobGraph batchJob(int parallelism) {
    Configuration c = new Configuration();
    c.set(PipelineOptions.NAME, "evac-batch");
    c.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(c);
    env.setParallelism(parallelism);
    env.fromSequence(0, 2000).name("evac-batch-numbers")
        .keyBy(v -> v % 200).reduce(Long::sum).name("evac-batch-sum")
        .map(new Slow(300)).name("evac-batch-slow")
        .sinkTo(new DiscardingSink<>());
    return env.getStreamGraph().getJobGraph(EvacuationLauncher.class.getClassLoader(), new JobID());
  }

  private static int intArg(String[] args, String name, int def) {
    for (int i = 0; i + 1 < args.length; i++) if (args[i].equals(name)) return Integer.parseInt(args[i + 1]);
    return def;
  }

  private static boolean hasArg(String[] args, String name) {
    for (String a : args) if (a.equals(name)) return true;
    return false;
  }

  /**
   * Counts records, and those seen before: the source's splits are contiguous ranges read in
   * order, so a value at or below the highest one seen of its range is a replay after a restore.
   */
  static final class Counting extends RichMapFunction<Long, Long> {
    static final AtomicLong PROCESSED = new AtomicLong();
    static final AtomicLong REPLAYED = new AtomicLong();
    private static final ConcurrentHashMap<Long, AtomicLong> HIGHEST = new ConcurrentHashMap<>();
    private static volatile boolean seen;
    private final long range;
    private final long sleepMs;

    Counting(int parallelism, long sleepMs) {
      this.range = Long.MAX_VALUE / parallelism;
      this.sleepMs = sleepMs;
    }

    static boolean running() {
      return seen;
    }

    @Override
    public Long map(Long v) throws Exception {
      if (sleepMs > 0) Thread.sleep(sleepMs);
      seen = true;
      PROCESSED.incrementAndGet();
      AtomicLong high = HIGHEST.computeIfAbsent(v / range, k -> new AtomicLong(-1));
      if (v <= high.get()) REPLAYED.incrementAndGet();
      else high.set(v);
      return v;
    }
  }

  static final class Slow extends RichMapFunction<Long, Long> {
    private final long ms;

    Slow(long ms) {
      this.ms = ms;
    }

    @Override
    public Long map(Long v) throws Exception {
      Thread.sleep(ms);
      return v;
    }
  }
}
