package io.github.flinkyarnblocklist.amrmproxy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.protocolrecords.FinishApplicationMasterRequest;
import org.apache.hadoop.yarn.api.protocolrecords.FinishApplicationMasterResponse;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterRequest;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterResponse;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.server.api.ContainerType;
import org.apache.hadoop.yarn.api.records.ResourceBlacklistRequest;
import org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.security.ContainerTokenIdentifier;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.amrmproxy.AMRMProxyApplicationContext;
import org.apache.hadoop.yarn.server.nodemanager.amrmproxy.AbstractRequestInterceptor;
import org.apache.hadoop.yarn.server.nodemanager.recovery.NMStateStoreService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An AMRMProxy interceptor that serves the blocklist proxy contract for the one application whose
 * AM it fronts. Put it before the last interceptor of
 * {@code yarn.nodemanager.amrmproxy.interceptor-class.pipeline}; it works with any AM, since it
 * changes only what the AM's allocate carries (the blacklist union and extra releases) and records
 * what the responses say.
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
  /** Names of the hand-off files in the application's local directories (the AM's $LOCAL_DIRS). */
  public static final String HANDOFF_JSON = "blocklist-amrm-proxy.json";
  public static final String HANDOFF_SECRET = "blocklist-amrm-proxy.secret";

  /** Without a configured key each NodeManager process draws its own. */
  private static final byte[] PROCESS_KEY = new byte[32];

  static {
    new SecureRandom().nextBytes(PROCESS_KEY);
  }

  /** Null when the listener never started or the pipeline retired (then everything passes through). */
  private volatile ProxyState state;
  private ProxyHttpServer server;
  private String secret;
  private ProxyHttpServer.Binding binding;
  private final List<Path> handoffFiles = new ArrayList<>();
  /** The state's change count last stored (guarded by storeLock); -1: nothing stored yet. */
  private long storedChanges = -1;
  private final Object storeLock = new Object();
  /**
   * Set (under storeLock) when the pipeline shut down or was found to front an attempt that is no
   * longer live here: nothing is stored after it, so no entry outlives the removal of the attempt's.
   */
  private boolean retired;
  /** Re-checks of a rebuilt pipeline's attempt (see recheckLiveness); null when none is scheduled. */
  private java.util.concurrent.ScheduledFuture<?> rechecks;
  private int rechecksLeft;
  /** One daemon thread for every pipeline's re-checks (a check is a scan of this NodeManager's container states). */
  private static final java.util.concurrent.ScheduledExecutorService RECHECKER =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "blocklist-amrm-recheck");
        t.setDaemon(true);
        return t;
      });
  static final long RECHECK_MS = 5_000;
  static final int RECHECKS = 24;

  /**
   * This interceptor's entry among the attempt's AMRMProxy entries in the NodeManager's state
   * store (beside AMRMProxyService's "user" and "amrmtoken", FederationInterceptor's own keys).
   */
  public static final String NMSS_KEY = "blocklist-interceptor.state";

  /**
   * Whether this application's AM asked for the blocklist (AmContainer#optsIn); null until known.
   * Every other AM's calls pass straight through and nothing of it is stored or served.
   */
  private volatile Boolean optedIn;

  @Override
  public void init(AMRMProxyApplicationContext ctx) {
    super.init(ctx);
    // On a NodeManager recovery the AM container is in the context already; on a first start it is
    // put there after this (ContainerManagerImpl#startContainers), so registration decides.
    AmContainer am = AmContainer.find(NmContexts.of(ctx), ctx.getApplicationAttemptId());
    if (am != null) decide(am);
  }

  /** Takes the opt-in decision once, and serves the application if its AM asked for it. */
  private synchronized void decide(AmContainer am) {
    if (optedIn != null) return;
    optedIn = am != null && am.optsIn();
    if (optedIn) activate();
  }

  /** Whether the AM asked for the blocklist (null: not known yet). For tests and the launcher. */
  public Boolean optedIn() {
    return optedIn;
  }

  private void activate() {
    AMRMProxyApplicationContext ctx = getApplicationContext();
    removeEarlierAttempts(ctx.getApplicationAttemptId());
    Configuration conf = ctx.getConf() != null ? ctx.getConf() : getConf();
    state = new ProxyState(conf.getInt(RING_SIZE, DEFAULT_RING_SIZE));
    final String appId = ctx.getApplicationAttemptId().getApplicationId().toString();
    final String attemptId = ctx.getApplicationAttemptId().toString();
    final ProxyState st = state;
    binding = new ProxyHttpServer.Binding() {
      @Override
      public String applicationId() {
        return appId;
      }

      @Override
      public String appAttemptId() {
        return attemptId;
      }

      @Override
      public ProxyState state() {
        return st;
      }

      @Override
      public void changed() {
        store();
      }
    };
    try {
      secret = deriveSecret(readKey(conf), appId);
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

  static byte[] readKey(Configuration conf) throws IOException {
    String file = conf.getTrimmed(SECRET_KEY_FILE, "");
    if (file.isEmpty()) return PROCESS_KEY;
    byte[] k = Files.readAllBytes(Paths.get(file));
    if (k.length < 16) throw new IOException(SECRET_KEY_FILE + " " + file + " holds fewer than 16 bytes");
    return k;
  }

  /** HMAC-SHA256(key, applicationId): the same on every NodeManager sharing the key file, so it survives a new attempt on another host. */
  static String deriveSecret(byte[] key, String applicationId) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return HexFormat.of().formatHex(mac.doFinal(applicationId.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Writes the address and the secret into the application's local directories, which YARN gives
   * only to this application's containers ($LOCAL_DIRS), owner-only. The directories appear while
   * the AM container is being localized, so this runs again when the AM registers.
   */
  private synchronized void writeHandoff() {
    if (server == null) return;
    AMRMProxyApplicationContext ctx = getApplicationContext();
    if (NmContexts.of(ctx) == null || NmContexts.of(ctx).getLocalDirsHandler() == null) return;
    String appId = ctx.getApplicationAttemptId().getApplicationId().toString();
    for (String dir : NmContexts.of(ctx).getLocalDirsHandler().getLocalDirs()) {
      Path appDir = Paths.get(dir, "usercache", ctx.getUser(), "appcache", appId);
      if (!Files.isDirectory(appDir)) continue;
      Path secretFile = appDir.resolve(HANDOFF_SECRET);
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("address", server.address());
      json.put("secretFile", secretFile.toString());
      json.put("applicationId", appId);
      json.put("appAttemptId", ctx.getApplicationAttemptId().toString());
      try {
        writeOwnerOnly(secretFile, secret + "\n");
        writeOwnerOnly(appDir.resolve(HANDOFF_JSON), Json.write(json) + "\n");
        if (!handoffFiles.contains(secretFile)) {
          handoffFiles.add(secretFile);
          handoffFiles.add(appDir.resolve(HANDOFF_JSON));
        }
      } catch (IOException | UnsupportedOperationException e) {
        LOG.warn("blocklist AMRM proxy: cannot write the hand-off into {}: {}", appDir, e.toString());
      }
    }
  }

  private static void writeOwnerOnly(Path target, String content) throws IOException {
    Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
    Files.deleteIfExists(tmp);
    Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.write(tmp, content.getBytes(StandardCharsets.UTF_8));
    try {
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  @Override
  public RegisterApplicationMasterResponse registerApplicationMaster(
      RegisterApplicationMasterRequest request) throws YarnException, IOException {
    RegisterApplicationMasterResponse resp = getNextInterceptor().registerApplicationMaster(request);
    if (optedIn == null) {
      AmContainer am = AmContainer.find(NmContexts.of(getApplicationContext()), getApplicationContext().getApplicationAttemptId());
      if (am == null) LOG.info("blocklist AMRM proxy: no AM container of {} on this NodeManager; passed through", getApplicationContext().getApplicationAttemptId());
      decide(am);
    }
    ProxyState state = this.state;
    if (state != null) {
      List<ProxyState.Live> previous = new ArrayList<>();
      if (resp.getContainersFromPreviousAttempts() != null) {
        ApplicationAttemptId current = getApplicationContext().getApplicationAttemptId();
        for (Container c : resp.getContainersFromPreviousAttempts()) {
          if (!isPreviousAttemptsAm(c, current)) previous.add(live(c));
        }
      }
      state.onRegistered(previous);
      store();
      writeHandoff();
    }
    return resp;
  }

  @Override
  public FinishApplicationMasterResponse finishApplicationMaster(
      FinishApplicationMasterRequest request) throws YarnException, IOException {
    return getNextInterceptor().finishApplicationMaster(request);
  }

  @Override
  public AllocateResponse allocate(AllocateRequest request) throws YarnException, IOException {
    ProxyState state = this.state;
    if (state == null) return getNextInterceptor().allocate(request);
    ResourceBlacklistRequest own = request.getResourceBlacklistRequest();
    List<String> amAdd = own == null || own.getBlacklistAdditions() == null ? List.of() : own.getBlacklistAdditions();
    List<String> amRem = own == null || own.getBlacklistRemovals() == null ? List.of() : own.getBlacklistRemovals();
    List<ContainerId> amReleases = request.getReleaseList() == null ? List.of() : request.getReleaseList();
    List<String> amReleaseIds = new ArrayList<>();
    for (ContainerId id : amReleases) amReleaseIds.add(id.toString());

    ProxyState.Outgoing out = state.beforeAllocate(amAdd, amRem, amReleaseIds);
    request.setResourceBlacklistRequest(
        ResourceBlacklistRequest.newInstance(out.blacklistAdditions, out.blacklistRemovals));
    if (!out.releases.isEmpty()) {
      LinkedHashSet<ContainerId> release = new LinkedHashSet<>(amReleases);
      for (String id : out.releases) release.add(ContainerId.fromString(id));
      request.setReleaseList(new ArrayList<>(release));
    }
    AllocateResponse resp;
    try {
      resp = getNextInterceptor().allocate(request);
    } catch (ApplicationMasterNotRegisteredException e) {
      state.allocateFailed(out, true);
      store();
      throw e;
    } catch (YarnException | IOException | RuntimeException e) {
      state.allocateFailed(out, false);
      store();
      throw e;
    }
    List<ProxyState.Live> allocated = new ArrayList<>();
    if (resp.getAllocatedContainers() != null) {
      for (Container c : resp.getAllocatedContainers()) allocated.add(live(c));
    }
    List<ProxyState.Finished> finished = new ArrayList<>();
    if (resp.getCompletedContainersStatuses() != null) {
      for (ContainerStatus s : resp.getCompletedContainersStatuses()) {
        finished.add(new ProxyState.Finished(s.getContainerId().toString(), s.getExitStatus(), s.getDiagnostics()));
      }
    }
    ProxyState.RingChange ring = state.afterAllocate(out, allocated, finished, System.currentTimeMillis());
    store();
    storeRing(ring);
    return resp;
  }

  /** Entries of the completed ring in the state store: one key each, so a completion is one small write. */
  public static final String NMSS_RING_PREFIX = "blocklist-interceptor.completed.";
  /** Diagnostics kept per stored entry: the reader needs the exit status; the text only for a human. */
  static final int STORED_DIAGNOSTICS = 1000;

  private void storeRing(ProxyState.RingChange change) {
    if (change.added().isEmpty() && change.dropped().isEmpty()) return;
    NMStateStoreService nmss = getNMStateStore();
    if (nmss == null || !nmss.canRecover()) return;
    ApplicationAttemptId attempt = getApplicationContext().getApplicationAttemptId();
    synchronized (storeLock) {
      if (retired) return;
      storeRingEntries(nmss, attempt, change);
    }
  }

  private static void storeRingEntries(NMStateStoreService nmss, ApplicationAttemptId attempt, ProxyState.RingChange change) {
    try {
      for (ProxyState.Completed c : change.added()) {
        String d = c.diagnostics().length() > STORED_DIAGNOSTICS ? c.diagnostics().substring(0, STORED_DIAGNOSTICS) : c.diagnostics();
        List<Object> row = List.of(c.seq(), c.containerId(), c.nodeId(), (long) c.exitStatus(), d, c.finishedAt());
        nmss.storeAMRMProxyAppContextEntry(attempt, NMSS_RING_PREFIX + c.containerId(), Json.write(row).getBytes(StandardCharsets.UTF_8));
      }
      for (ProxyState.Completed c : change.dropped()) nmss.removeAMRMProxyAppContextEntry(attempt, NMSS_RING_PREFIX + c.containerId());
    } catch (IOException | RuntimeException e) {
      LOG.warn("blocklist AMRM proxy: cannot store completed containers of {} (a NodeManager restart would lose them): {}", attempt, e.toString());
    }
  }

  /** The stored ring entries among the recovered ones; unreadable ones are skipped (and counted in the log). */
  static List<ProxyState.Completed> storedRing(Map<String, byte[]> recovered, List<String> unreadable) {
    List<ProxyState.Completed> out = new ArrayList<>();
    for (Map.Entry<String, byte[]> e : recovered.entrySet()) {
      if (!e.getKey().startsWith(NMSS_RING_PREFIX)) continue;
      try {
        if (!(Json.parse(new String(e.getValue(), StandardCharsets.UTF_8)) instanceof List<?> r) || r.size() != 6
            || !(r.get(0) instanceof Long seq) || !(r.get(1) instanceof String id) || !(r.get(2) instanceof String node)
            || !(r.get(3) instanceof Long exit) || !(r.get(4) instanceof String diag) || !(r.get(5) instanceof Long at)) {
          unreadable.add(e.getKey());
          continue;
        }
        out.add(new ProxyState.Completed(seq, id, node, exit.intValue(), diag, at));
      } catch (Json.BadJson ex) {
        unreadable.add(e.getKey());
      }
    }
    return out;
  }

  /**
   * Stores what a NodeManager restart must not lose (ProxyState#durable) when it changed since the
   * last store, into the NodeManager's state store; only with recovery enabled (a store that
   * cannot recover keeps nothing). The record is rewritten whole: it is small beside an allocate
   * (a few hundred bytes plus about 100 per live container) and written only after a change.
   */
  private void store() {
    if (state == null) return;
    NMStateStoreService nmss = getNMStateStore();
    if (nmss == null || !nmss.canRecover()) return;
    synchronized (storeLock) {
      if (retired) return;
      // Read before the record: a change racing in makes the next store() write again.
      long changes = state.durableChanges();
      if (changes == storedChanges) return;
      byte[] record = Json.write(state.durable()).getBytes(StandardCharsets.UTF_8);
      try {
        nmss.storeAMRMProxyAppContextEntry(getApplicationContext().getApplicationAttemptId(), NMSS_KEY, record);
        storedChanges = changes;
      } catch (IOException | RuntimeException e) {
        LOG.warn("blocklist AMRM proxy: cannot store its state for {} (a NodeManager restart would lose it): {}",
            getApplicationContext().getApplicationAttemptId(), e.toString());
      }
    }
  }

  /**
   * A NodeManager restart with recovery: AMRMProxyService#recover builds a new pipeline for each
   * running attempt (init, then this) with the entries stored for it. The AM, its containers and
   * the RM's blacklist lived on; this instance takes back the owners, what the RM holds and the
   * live containers, and the old ring's entries at the start of its own, under its new epoch
   * (readers start it from 1; they key entries by container, so one read before is not counted twice).
   */
  @Override
  public void recover(Map<String, byte[]> recoveredDataMap) {
    super.recover(recoveredDataMap);
    // Entries of this interceptor prove an opt-in whose AM container is no longer here to ask.
    if (optedIn == null && !holdsOwnEntries(recoveredDataMap)) optedIn = false;
    if (Boolean.FALSE.equals(optedIn)) return;
    String attempt = getApplicationContext().getApplicationAttemptId().toString();
    String dead = notLiveHere(getApplicationContext().getApplicationAttemptId(), NmContexts.of(getApplicationContext()));
    if (dead != null) {
      retire();
      LOG.info("blocklist AMRM proxy for {}: rebuilt by the NodeManager's recovery but {}: not served, its stored entries removed",
          attempt, dead);
      return;
    }
    scheduleRechecks();
    byte[] record = recoveredDataMap == null ? null : recoveredDataMap.get(NMSS_KEY);
    if (state == null || recoveredDataMap == null) return;
    String why;
    try {
      why = record == null ? "none stored" : state.restore(Json.parse(new String(record, StandardCharsets.UTF_8)));
    } catch (Json.BadJson e) {
      why = e.getMessage();
    }
    if (why != null) {
      LOG.warn("blocklist AMRM proxy for {}: stored state not recovered ({}); starting empty", attempt, why);
    } else {
      synchronized (storeLock) {
        storedChanges = -1;
      }
      store();
    }
    List<String> unreadable = new ArrayList<>();
    List<ProxyState.Completed> old = storedRing(recoveredDataMap, unreadable);
    List<ProxyState.Completed> left = state.restoreRing(old);
    // The stored entries keep their keys (by container): the ones left out and unreadable go.
    NMStateStoreService nmss = getNMStateStore();
    if (nmss != null && nmss.canRecover()) {
      List<String> gone = new ArrayList<>(unreadable);
      for (ProxyState.Completed c : left) gone.add(NMSS_RING_PREFIX + c.containerId());
      for (String k : gone) {
        try {
          nmss.removeAMRMProxyAppContextEntry(getApplicationContext().getApplicationAttemptId(), k);
        } catch (IOException e) {
          LOG.warn("blocklist AMRM proxy for {}: cannot remove {}: {}", attempt, k, e.toString());
        }
      }
    }
    LOG.info("blocklist AMRM proxy for {}: recovered {} live container(s), {} completed ({} unreadable) and the blacklist {}",
        attempt, state.containers().size(), old.size() - left.size(), unreadable.size(), state.blacklistView());
  }

  static boolean holdsOwnEntries(Map<String, byte[]> recovered) {
    if (recovered == null) return false;
    for (String k : recovered.keySet()) {
      if (k.equals(NMSS_KEY) || k.startsWith(NMSS_RING_PREFIX)) return true;
    }
    return false;
  }

  /**
   * Whether a container handed over from an earlier attempt is that attempt's own AM container.
   * AbstractYarnScheduler#getTransferredContainers leaves out only the current attempt's AM
   * container; the previous one is handed over too while the RM still counts it live, which after
   * a NodeManager restart lasts seconds (a recovered NodeManager polls a reacquired container's
   * pid every second). It is no worker of the job: its end (the old AM's exit) must not be put
   * on its node as a failure. Known by its container token's type, never by its number.
   */
  static boolean isPreviousAttemptsAm(Container c, ApplicationAttemptId current) {
    return !c.getId().getApplicationAttemptId().equals(current) && AmContainer.isAm(c);
  }

  private static ProxyState.Live live(Container c) {
    return new ProxyState.Live(c.getId().toString(), c.getNodeId().toString(),
        c.getNodeHttpAddress() == null ? "" : c.getNodeHttpAddress(), "RUNNING");
  }

  /**
   * Stops answering for this application and leaves its hand-off files where they are: what the
   * exit of a NodeManager's process does to its listener. A NodeManager stopped inside a JVM that
   * keeps running needs it (the test launcher), since AMRMProxyService#serviceStop stops its RPC
   * server but never shuts the pipelines down.
   */
  public synchronized void stopServing() {
    if (server != null) {
      server.unregister(secret, binding);
      server.release();
      server = null;
    }
  }

  /**
   * AMRMProxyService calls this when the application finishes on this NodeManager (stopApplication,
   * which then removes the attempt's stored entries itself) and when a new attempt's AM starts here
   * (initializePipeline, which removes the new attempt's entries instead of this one's): either way
   * this attempt is over, so everything stored under it goes, AMRMProxyService's own user and
   * token entries with it (they are what makes a NodeManager restart rebuild the pipeline).
   */
  @Override
  public void shutdown() {
    if (Boolean.TRUE.equals(optedIn)) retire();
    super.shutdown();
  }

  /**
   * A NodeManager restarted while an earlier attempt's AM container was being stopped (the RM's
   * order carried out, its end not yet in the state store) rebuilds that attempt as live; its
   * container's end comes seconds later, when the recovered NodeManager finds the process gone. So
   * a rebuilt pipeline looks again every RECHECK_MS for two minutes, and retires once its attempt
   * is found over. Later ends are Hadoop's to clean up (stopApplication) or the next restart's.
   */
  private synchronized void scheduleRechecks() {
    if (getApplicationContext() == null || NmContexts.of(getApplicationContext()) == null) return;
    rechecksLeft = RECHECKS;
    rechecks = RECHECKER.scheduleWithFixedDelay(() -> {
      try {
        recheckLiveness();
      } catch (RuntimeException e) {
        LOG.warn("blocklist AMRM proxy: re-check failed: {}", e.toString());
      }
    }, RECHECK_MS, RECHECK_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  /** One re-check: retires the pipeline when its attempt is over here; whether it did. */
  boolean recheckLiveness() {
    synchronized (this) {
      if (retired || --rechecksLeft < 0) {
        cancelRechecks();
        return false;
      }
    }
    String dead = notLiveHere(getApplicationContext().getApplicationAttemptId(), NmContexts.of(getApplicationContext()));
    if (dead == null) return false;
    retire();
    LOG.info("blocklist AMRM proxy for {}: rebuilt by the NodeManager's recovery, then {}: no longer served, its stored entries removed",
        getApplicationContext().getApplicationAttemptId(), dead);
    return true;
  }

  private synchronized void cancelRechecks() {
    if (rechecks != null) rechecks.cancel(false);
    rechecks = null;
  }

  /** Stops serving, deletes the hand-off, stores nothing more and removes the attempt's stored entries. */
  private void retire() {
    cancelRechecks();
    stopServing();
    synchronized (this) {
      for (Path p : handoffFiles) {
        try {
          Files.deleteIfExists(p);
        } catch (IOException ignored) {
          // the application's directories are removed with the application anyway
        }
      }
      handoffFiles.clear();
    }
    AMRMProxyApplicationContext ctx = getApplicationContext();
    if (ctx == null) return;
    synchronized (storeLock) {
      retired = true;
      state = null;
      NMStateStoreService nmss = getNMStateStore();
      if (nmss == null || !nmss.canRecover()) return;
      try {
        nmss.removeAMRMProxyAppContext(ctx.getApplicationAttemptId());
      } catch (IOException | RuntimeException e) {
        LOG.warn("blocklist AMRM proxy: cannot remove the stored entries of {}: {}", ctx.getApplicationAttemptId(), e.toString());
      }
    }
  }

  /**
   * Removes what earlier attempts of the application stored on this NodeManager. When a new
   * attempt's AM starts here, AMRMProxyService#initializePipeline shuts the previous pipeline down
   * but removes the state-store entries of the new attempt, not of the previous one; and a
   * pipeline that no longer exists (an attempt whose pipeline a recovery rebuilt and replaced) is
   * never shut down at all. Left behind, an earlier attempt's entries are rebuilt into a pipeline
   * on every NodeManager restart, in an order (a HashMap's) that can put it in place of the live
   * attempt's. The RM never runs an earlier attempt again, so none of them is needed. One prefix
   * removal (a LevelDB seek) per earlier attempt number.
   */
  private void removeEarlierAttempts(ApplicationAttemptId current) {
    NMStateStoreService nmss = getNMStateStore();
    if (nmss == null || !nmss.canRecover()) return;
    for (int n = 1; n < current.getAttemptId(); n++) {
      ApplicationAttemptId earlier = ApplicationAttemptId.newInstance(current.getApplicationId(), n);
      try {
        nmss.removeAMRMProxyAppContext(earlier);
      } catch (IOException | RuntimeException e) {
        LOG.warn("blocklist AMRM proxy for {}: cannot remove the stored entries of {}: {}", current, earlier, e.toString());
      }
    }
  }

  /**
   * Why a pipeline AMRMProxyService#recover rebuilt fronts no live attempt, or null when it may.
   * The NodeManager recovers its containers before the AMRMProxy (ContainerManagerImpl#recover),
   * and keeps a container in its context and its state store until the RM has heard of its end.
   * So a later attempt's container here means this attempt was superseded (the RM allocates for the
   * current attempt only); no AM container of this attempt here, or one the state store records as
   * completed or killed, means its AM is gone: nothing calls this pipeline again. With no
   * NodeManager context to look at (none recovered) it is taken as live.
   */
  static String notLiveHere(ApplicationAttemptId attempt, Context nm) {
    if (nm == null || nm.getContainers() == null) return null;
    List<ContainerId> ams = new ArrayList<>();
    for (org.apache.hadoop.yarn.server.nodemanager.containermanager.container.Container c : nm.getContainers().values()) {
      ContainerId id = c.getContainerId();
      if (id == null || !id.getApplicationAttemptId().getApplicationId().equals(attempt.getApplicationId())) continue;
      if (id.getApplicationAttemptId().getAttemptId() > attempt.getAttemptId()) {
        return "a later attempt (" + id.getApplicationAttemptId() + ") has containers here";
      }
      if (id.getApplicationAttemptId().equals(attempt) && AmContainer.isAm(c)) ams.add(id);
    }
    if (ams.isEmpty()) return "its AM container is no longer on this NodeManager";
    NMStateStoreService nmss = nm.getNMStateStore();
    if (nmss == null || !nmss.canRecover()) return null;
    int ended = 0;
    List<String> seen = new ArrayList<>();
    try (org.apache.hadoop.yarn.server.nodemanager.recovery.RecoveryIterator<NMStateStoreService.RecoveredContainerState> it = nmss.getContainerStateIterator()) {
      while (it.hasNext()) {
        NMStateStoreService.RecoveredContainerState rcs = it.next();
        if (ams.contains(rcs.getContainerId())) seen.add(rcs.getContainerId() + " " + rcs.getStatus() + (rcs.getKilled() ? " killed" : ""));
        if (ams.contains(rcs.getContainerId())
            && (rcs.getStatus() == NMStateStoreService.RecoveredContainerStatus.COMPLETED || rcs.getKilled())) {
          ended++;
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("blocklist AMRM proxy for {}: cannot read the NodeManager's container states ({}); taken as live", attempt, e.toString());
      return null;
    }
    if (ended == ams.size()) return "its AM container " + ams.get(0) + " has ended (completed or killed in the state store)";
    LOG.debug("blocklist AMRM proxy for {}: its AM container runs here ({} in the state store)", attempt, seen.isEmpty() ? ams + " not" : seen);
    return null;
  }

  /** For tests and diagnostics in the same JVM. */
  public ProxyState proxyState() {
    return state;
  }

  static List<String> emptyIfNull(List<String> l) {
    return l == null ? Collections.emptyList() : l;
  }
}
