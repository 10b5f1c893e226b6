package io.github.flinkyarnblocklist.amrmproxy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.protocolrecords.FinishApplicationMasterRequest;
import org.apache.hadoop.yarn.api.protocolrecords.FinishApplicationMasterResponse;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterRequest;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterResponse;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.nodemanager.amrmproxy.AMRMProxyApplicationContext;
import org.apache.hadoop.yarn.server.nodemanager.amrmproxy.AbstractRequestInterceptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An AMRMProxy interceptor that serves the blocklist proxy contract for the one application whose
 * AM it fronts, if that AM opted in (AmContainer#optsIn); every other AM passes straight through.
 * Put it before the last interceptor of {@code yarn.nodemanager.amrmproxy.interceptor-class.pipeline}.
 */
public class BlocklistRequestInterceptor extends AbstractRequestInterceptor {
  private static final Logger LOG = LoggerFactory.getLogger(BlocklistRequestInterceptor.class);

  public static final String PREFIX = "yarn.nodemanager.amrmproxy.blocklist.";
  /** Where the per-NodeManager listener binds. Loopback: the sidecar runs in the AM container, on this host. */
  public static final String ADDRESS = PREFIX + "address";
  public static final String DEFAULT_ADDRESS = "127.0.0.1:8099";
  /** A file holding the key the per-application secrets are derived from (same file on every NodeManager). */
  public static final String SECRET_KEY_FILE = PREFIX + "secret-key-file";
  public static final String RING_SIZE = PREFIX + "completed-ring-size";
  public static final int DEFAULT_RING_SIZE = 1024;
  public static final String HANDOFF_JSON = Handoff.JSON;
  public static final String HANDOFF_SECRET = Handoff.SECRET;
  public static final String NMSS_KEY = AttemptStore.KEY;
  public static final String NMSS_RING_PREFIX = AttemptStore.RING_PREFIX;

  /** Whether this application's AM asked for the blocklist; null until known. */
  private volatile Boolean optedIn;
  /** Null unless opted in and served (then every allocate goes through AllocatePath). */
  private volatile ProxyState state;
  private AttemptStore store;
  private ProxyHttpServer server;
  private String secret;
  private ProxyHttpServer.Binding binding;
  private String amContainerId;
  private final Handoff handoff = new Handoff();
  private final Liveness liveness = new Liveness();

  @Override
  public void init(AMRMProxyApplicationContext ctx) {
    super.init(ctx);
    store = new AttemptStore(getNMStateStore(), ctx.getApplicationAttemptId());
    // On a NodeManager recovery the AM container is in the context already; on a first start it is
    // put there after this (ContainerManagerImpl#startContainers), so its registration decides.
    AmContainer am = AmContainer.find(NmContexts.of(ctx), ctx.getApplicationAttemptId());
    if (am != null) decide(am);
  }

  /** Takes the opt-in decision once, and serves the application if its AM asked. */
  private synchronized void decide(AmContainer am) {
    if (optedIn != null) return;
    optedIn = am != null && am.optsIn();
    if (am != null) amContainerId = am.id().toString();
    if (optedIn) activate();
  }

  /** Whether the AM asked for the blocklist (null: not known yet). For tests and the launcher. */
  public Boolean optedIn() {
    return optedIn;
  }

  private void activate() {
    AMRMProxyApplicationContext ctx = getApplicationContext();
    store.removeEarlierAttempts();
    Configuration conf = ctx.getConf() != null ? ctx.getConf() : getConf();
    state = new ProxyState(conf.getInt(RING_SIZE, DEFAULT_RING_SIZE));
    binding = binding(ctx.getApplicationAttemptId(), state);
    String attemptId = ctx.getApplicationAttemptId().toString();
    try {
      secret = Secrets.derive(Secrets.readKey(conf), ctx.getApplicationAttemptId().getApplicationId().toString());
      String addr = conf.getTrimmed(ADDRESS, DEFAULT_ADDRESS);
      int colon = addr.lastIndexOf(':');
      if (colon < 1) throw new IOException(ADDRESS + " must be host:port, got '" + addr + "'");
      server = ProxyHttpServer.acquire(addr.substring(0, colon), Integer.parseInt(addr.substring(colon + 1)));
      if (!server.register(secret, binding)) {
        // Only a pipeline rebuilt for an earlier attempt gets here; recover() retires it.
        LOG.info("blocklist AMRM proxy for {} not served: a later attempt of the application is", attemptId);
        server.release();
        server = null;
        return;
      }
    } catch (IOException | RuntimeException e) {
      // The AM must keep working without the blocklist: it only loses the sidecar's write path.
      LOG.error("blocklist AMRM proxy for {} not served: {}", attemptId, e.toString());
      server = null;
      return;
    }
    writeHandoff();
    LOG.info("blocklist AMRM proxy for {} at {}", attemptId, server.address());
  }

  private ProxyHttpServer.Binding binding(ApplicationAttemptId attempt, final ProxyState st) {
    final String appId = attempt.getApplicationId().toString();
    final String attemptId = attempt.toString();
    return new ProxyHttpServer.Binding() {
      @Override
      public String applicationId() {
        return appId;
      }

      @Override
      public String appAttemptId() {
        return attemptId;
      }

      @Override
      public String amContainerId() {
        return amContainerId;
      }

      @Override
      public ProxyState state() {
        return st;
      }

      @Override
      public void changed() {
        store.store(st);
      }
    };
  }

  /** The hand-off again: the application's directories appear while the AM container is localized. */
  private synchronized void writeHandoff() {
    if (server == null) return;
    AMRMProxyApplicationContext ctx = getApplicationContext();
    ApplicationAttemptId a = ctx.getApplicationAttemptId();
    handoff.write(NmContexts.of(ctx), ctx.getUser(), a.getApplicationId().toString(), a.toString(), server.address(), secret);
  }

  @Override
  public RegisterApplicationMasterResponse registerApplicationMaster(RegisterApplicationMasterRequest request)
      throws YarnException, IOException {
    RegisterApplicationMasterResponse resp = getNextInterceptor().registerApplicationMaster(request);
    if (optedIn == null) {
      ApplicationAttemptId attempt = getApplicationContext().getApplicationAttemptId();
      AmContainer am = AmContainer.find(NmContexts.of(getApplicationContext()), attempt);
      if (am == null) LOG.info("blocklist AMRM proxy: no AM container of {} on this NodeManager; passed through", attempt);
      decide(am);
    }
    ProxyState st = this.state;
    if (st == null) return resp;
    List<Live> previous = new ArrayList<>();
    if (resp.getContainersFromPreviousAttempts() != null) {
      ApplicationAttemptId current = getApplicationContext().getApplicationAttemptId();
      for (Container c : resp.getContainersFromPreviousAttempts()) {
        if (!isPreviousAttemptsAm(c, current)) previous.add(AllocatePath.live(c));
      }
    }
    st.onRegistered(previous);
    store.store(st);
    writeHandoff();
    return resp;
  }

  /**
   * Whether a container handed over from an earlier attempt is that attempt's own AM container:
   * AbstractYarnScheduler#getTransferredContainers leaves out only the current attempt's, so the
   * previous one comes too while the RM counts it live (seconds after a NodeManager restart), and
   * its end must not be put on its node as a failure. Known by its token's type, never its number.
   */
  static boolean isPreviousAttemptsAm(Container c, ApplicationAttemptId current) {
    return !c.getId().getApplicationAttemptId().equals(current) && AmContainer.isAm(c);
  }

  @Override
  public FinishApplicationMasterResponse finishApplicationMaster(FinishApplicationMasterRequest request)
      throws YarnException, IOException {
    return getNextInterceptor().finishApplicationMaster(request);
  }

  @Override
  public AllocateResponse allocate(AllocateRequest request) throws YarnException, IOException {
    ProxyState st = this.state;
    if (st == null) return getNextInterceptor().allocate(request);
    return AllocatePath.allocate(st, store, getNextInterceptor(), request);
  }

  /**
   * A NodeManager restart with recovery: AMRMProxyService#recover builds a new pipeline for each
   * running attempt (init, then this) with the entries stored for it. The AM, its containers and
   * the RM's blacklist lived on; this instance takes back what the old one stored (AttemptStore).
   */
  @Override
  public void recover(Map<String, byte[]> recoveredDataMap) {
    super.recover(recoveredDataMap);
    // Entries of this interceptor prove an opt-in whose AM container is no longer here to ask.
    synchronized (this) {
      if (optedIn == null && !AttemptStore.holdsOwnEntries(recoveredDataMap)) optedIn = false;
    }
    if (Boolean.FALSE.equals(optedIn)) return;
    ApplicationAttemptId attempt = getApplicationContext().getApplicationAttemptId();
    String dead = Liveness.notLiveHere(attempt, NmContexts.of(getApplicationContext()));
    if (dead != null) {
      retire();
      LOG.info("blocklist AMRM proxy for {}: rebuilt by the NodeManager's recovery but {}: not served, its stored entries removed", attempt, dead);
      return;
    }
    if (NmContexts.of(getApplicationContext()) != null) liveness.schedule(this::recheckLiveness);
    ProxyState st = this.state;
    if (st == null || recoveredDataMap == null) return;
    LOG.info("blocklist AMRM proxy for {}: recovered {}", attempt, store.recover(st, recoveredDataMap));
  }

  /** One re-check of a rebuilt pipeline: retires it when its attempt is over here; whether it did. */
  boolean recheckLiveness() {
    if (state == null || !liveness.take()) return false;
    ApplicationAttemptId attempt = getApplicationContext().getApplicationAttemptId();
    String dead = Liveness.notLiveHere(attempt, NmContexts.of(getApplicationContext()));
    if (dead == null) return false;
    retire();
    LOG.info("blocklist AMRM proxy for {}: rebuilt by the NodeManager's recovery, then {}: no longer served, its stored entries removed", attempt, dead);
    return true;
  }

  /**
   * Stops answering for this application and leaves its hand-off files where they are: what the
   * exit of a NodeManager's process does to its listener. A NodeManager stopped inside a JVM that
   * keeps running needs it (the test launcher): AMRMProxyService#serviceStop never shuts pipelines down.
   */
  public synchronized void stopServing() {
    if (server != null) {
      server.unregister(secret, binding);
      server.release();
      server = null;
    }
  }

  /**
   * AMRMProxyService calls this when the application finishes here and when a new attempt's AM
   * starts here (which removes the new attempt's stored entries, not this one's): either way this
   * attempt is over, so everything it stored goes. An AM that did not opt in is left to Hadoop.
   */
  @Override
  public void shutdown() {
    if (Boolean.TRUE.equals(optedIn)) retire();
    super.shutdown();
  }

  /** Stops serving, deletes the hand-off, stores nothing more and removes the attempt's stored entries. */
  private void retire() {
    liveness.cancel();
    stopServing();
    handoff.delete();
    state = null;
    if (store != null) store.retire();
  }

  /** For tests and diagnostics in the same JVM. */
  public ProxyState proxyState() {
    return state;
  }
}
