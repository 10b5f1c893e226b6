package io.github.flinkyarnblocklist.flinkyarn;

import java.time.Duration;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/** The jobs the rig runs in the session (their classes reach the containers through the dist jar's class path). */
final class Jobs {
  static final String STREAM = "blocklist-stream";
  static final String SLOW_BATCH = "blocklist-slow-batch";

  private Jobs() {}

  /**
   * A streaming job that never ends: parallelism 3 (one slot per TaskManager, so each NodeManager
   * hosts one subtask), a rebalance so every TaskManager exchanges data with every other (a lost
   * one fails its peers' channels at once), checkpoints every 2 s, a fixed-delay restart strategy.
   * The pace is set in the source's own task (the slow map is chained to it): a slow operator behind
   * the exchange kept the network buffers full, a checkpoint's barrier queued behind them, and no
   * checkpoint ever completed (a restore then started from none, and a checkpoint-aligned
   * evacuation waited for its bound).
   */
  static JobGraph stream() {
    Configuration conf = new Configuration();
    conf.set(PipelineOptions.NAME, STREAM);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, Integer.MAX_VALUE);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofSeconds(1));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(3);
    env.enableCheckpointing(2000);
    env.fromSequence(0, Long.MAX_VALUE).name("numbers")
        .map(new Slow()).name("slow")
        .rebalance()
        .sinkTo(new DiscardingSink<>()).name("discard");
    return env.getStreamGraph().getJobGraph(Jobs.class.getClassLoader(), new JobID());
  }

  /** A few hundred records a second per subtask: the job stays cheap on 2 cores. */
  static final class Slow implements MapFunction<Long, Long> {
    @Override
    public Long map(Long v) throws Exception {
      Thread.sleep(5);
      return v;
    }
  }

  /**
   * A batch job whose first attempt of one map subtask hangs: Flink's slow-task detector (the
   * session's speculative-execution keys, FlinkSession) blocks that attempt's node, and the
   * next TaskManager Flink asks for carries the block to YARN through Flink's own AMRMClient. The
   * speculative attempt is quick, so the job finishes.
   */
  static JobGraph slowBatch() {
    Configuration conf = new Configuration();
    conf.set(PipelineOptions.NAME, SLOW_BATCH);
    conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    // Set on each operator: the adaptive batch scheduler decides a parallelism that is not.
    env.fromSequence(0, 99).name("numbers").setParallelism(2)
        .rebalance()
        .map(new HangsOnce()).name("hangs-once").setParallelism(2)
        // A wider last stage: once the speculative attempt has ended the slow one, the job asks
        // for more TaskManagers, and Flink's YARN driver hands YARN its blocked nodes only with a
        // container request (the speculative attempt itself may take a slot already there).
        .sinkTo(new DiscardingSink<>()).name("discard").setParallelism(3);
    return env.getStreamGraph().getJobGraph(Jobs.class.getClassLoader(), new JobID());
  }

  /** Subtask 0's first attempt sleeps 10 minutes before its first record; every other attempt is quick. */
  static final class HangsOnce extends RichMapFunction<Long, Long> {
    private transient boolean hang;

    @Override
    public void open(OpenContext ctx) {
      hang = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0
          && getRuntimeContext().getTaskInfo().getAttemptNumber() == 0;
    }

    @Override
    public Long map(Long v) throws Exception {
      if (hang) Thread.sleep(600_000);
      return v;
    }
  }
}
