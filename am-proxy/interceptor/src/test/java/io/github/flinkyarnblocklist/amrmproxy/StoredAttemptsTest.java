package io.github.flinkyarnblocklist.amrmproxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterRequest;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.api.ContainerType;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.amrmproxy.AMRMProxyApplicationContextImpl;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.container.Container;
import org.apache.hadoop.yarn.server.nodemanager.recovery.NMLeveldbStateStoreService;
import org.apache.hadoop.yarn.server.nodemanager.recovery.NMStateStoreService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the interceptor leaves in a real NodeManager state store (LevelDB, as
 * yarn.nodemanager.recovery.enabled uses) across attempts: AMRMProxyService#initializePipeline
 * removes the new attempt's entries when it replaces a pipeline, not the old one's, so the
 * interceptor removes the earlier attempts' itself, its own on shutdown, and a pipeline recovery
 * rebuilt for an attempt that is no longer live here neither serves nor keeps anything.
 */
class StoredAttemptsTest {
  private static final ApplicationId APP = ApplicationId.newInstance(1652313600000L, 7);
  private static final ApplicationId OTHER = ApplicationId.newInstance(1652313600000L, 8);

  @TempDir Path dir;
  private NMLeveldbStateStoreService store;
  private final ConcurrentMap<ContainerId, Container> containers = new ConcurrentHashMap<>();
  private Context nm;
  private YarnConfiguration conf;
  private int port;
  /** Keeps the shared listener up between interceptors, as another application's pipeline would. */
  private ProxyHttpServer keepAlive;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void start() throws Exception {
    conf = new YarnConfiguration();
    conf.setBoolean(YarnConfiguration.NM_RECOVERY_ENABLED, true);
    conf.set(YarnConfiguration.NM_RECOVERY_DIR, dir.resolve("recovery").toString());
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    conf.set(BlocklistRequestInterceptor.ADDRESS, "127.0.0.1:" + port);
    Path key = dir.resolve("key");
    Files.write(key, new byte[32]);
    conf.set(BlocklistRequestInterceptor.SECRET_KEY_FILE, key.toString());
    store = new NMLeveldbStateStoreService();
    store.init(conf);
    store.start();
    // Only what the interceptor reads of the NodeManager: its state store and its containers.
    nm = (Context) Proxy.newProxyInstance(Context.class.getClassLoader(), new Class<?>[] {Context.class}, (p, m, a) -> switch (m.getName()) {
      case "getNMStateStore" -> store;
      case "getContainers" -> containers;
      default -> null;
    });
    keepAlive = ProxyHttpServer.acquire("127.0.0.1", port);
  }

  @AfterEach
  void stop() throws Exception {
    keepAlive.release();
    store.stop();
  }

  private static ApplicationAttemptId attempt(ApplicationId app, int n) {
    return ApplicationAttemptId.newInstance(app, n);
  }

  /** What AMRMProxyService#initializePipeline stores for an attempt whose AM starts here. */
  private void storeAsAmrmProxyService(ApplicationAttemptId a) throws Exception {
    store.storeAMRMProxyAppContextEntry(a, "user", "flink".getBytes(StandardCharsets.UTF_8));
    store.storeAMRMProxyAppContextEntry(a, "amrmtoken", "token".getBytes(StandardCharsets.UTF_8));
  }

  /** Each stored attempt with its keys. */
  private Map<String, Set<String>> stored() throws Exception {
    NMStateStoreService.RecoveredAMRMProxyState s = store.loadAMRMProxyState();
    Map<String, Set<String>> out = new TreeMap<>();
    s.getAppContexts().forEach((a, m) -> out.put(a.toString(), new TreeSet<>(m.keySet())));
    return out;
  }

  /** The pipeline as AMRMProxyService builds it (init), before the AM container is in the context. */
  private BlocklistRequestInterceptor initOnly(ApplicationAttemptId a, Context context, YarnConfiguration c) {
    BlocklistRequestInterceptor i = new BlocklistRequestInterceptor();
    i.init(new AMRMProxyApplicationContextImpl(context, c, a, "flink", null, null, null, null));
    i.setNextInterceptor(new Interceptors.FakeRm());
    return i;
  }

  /** A first start: init, then the AM (opted in) registers from its container. */
  private BlocklistRequestInterceptor pipeline(ApplicationAttemptId a) throws Exception {
    return registered(initOnly(a, nm, conf), a);
  }

  private BlocklistRequestInterceptor registered(BlocklistRequestInterceptor i, ApplicationAttemptId a) throws Exception {
    ContainerId am = ContainerId.newContainerId(a, 1);
    boolean added = !containers.containsKey(am);
    if (added) amContainerRuns(a, 1);
    i.registerApplicationMaster(RegisterApplicationMasterRequest.newInstance("localhost", 0, ""));
    if (added) containers.remove(am);
    return i;
  }

  private BlocklistRequestInterceptor recovered(ApplicationAttemptId a) throws Exception {
    Map<String, byte[]> entries = store.loadAMRMProxyState().getAppContexts().get(a);
    assertNotNull(entries, a + " has stored entries to recover");
    BlocklistRequestInterceptor i = initOnly(a, nm, conf);
    i.recover(entries);
    return i;
  }

  /** The attempt's pipeline, holding a block of nm9 through its HTTP API; then its listener goes (the NodeManager stops). */
  private void servedAndStopped(ApplicationAttemptId a) throws Exception {
    BlocklistRequestInterceptor before = pipeline(a);
    assertEquals(200, call("POST", "/amrm/v1/blacklist", "{\"blacklistAdditions\":[\"nm9\"]}").statusCode());
    before.stopServing();
  }

  /** The attempt's AM container (number 1) as the NodeManager state store keeps a launched one. */
  private ContainerId storeLaunchedAm(ApplicationAttemptId a) throws Exception {
    ContainerId am = ContainerId.newContainerId(a, 1);
    org.apache.hadoop.yarn.api.records.Token token = org.apache.hadoop.yarn.server.utils.BuilderUtils.newContainerToken(
        am, 0, "localhost", 8041, "flink", Resource.newInstance(256, 1), 0L, 0, new byte[0], 0L);
    store.storeContainer(am, 0, 0L, org.apache.hadoop.yarn.api.protocolrecords.StartContainerRequest.newInstance(
        org.apache.hadoop.yarn.api.records.ContainerLaunchContext.newInstance(null, null, null, null, null, null), token));
    store.storeContainerLaunched(am);
    return am;
  }

  /** The attempt's AM container (opted in) in the NodeManager's context. */
  private void amContainerRuns(ApplicationAttemptId a, long number) {
    containers.put(ContainerId.newContainerId(a, number), Interceptors.nmContainer(a, number, ContainerType.APPLICATION_MASTER, true));
  }

  private HttpResponse<String> call(String method, String path, String body) throws Exception {
    String secret = Secrets.derive(new byte[32], APP.toString());
    HttpRequest.Builder r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).header("Authorization", "Bearer " + secret);
    r.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aNewAttemptRemovesWhatEarlierAttemptsOfItsApplicationStoredHere() throws Exception {
    storeAsAmrmProxyService(attempt(APP, 1));
    store.storeAMRMProxyAppContextEntry(attempt(APP, 1), BlocklistRequestInterceptor.NMSS_KEY, "{}".getBytes(StandardCharsets.UTF_8));
    store.storeAMRMProxyAppContextEntry(attempt(APP, 1), BlocklistRequestInterceptor.NMSS_RING_PREFIX + "container_1_0007_01_000002", "[]".getBytes(StandardCharsets.UTF_8));
    storeAsAmrmProxyService(attempt(APP, 2));
    storeAsAmrmProxyService(attempt(OTHER, 1));
    assertEquals(3, stored().size());

    // Attempt 3's AM starts here: AMRMProxyService removes attempt 3's entries (none) and stores its own.
    BlocklistRequestInterceptor third = pipeline(attempt(APP, 3));
    storeAsAmrmProxyService(attempt(APP, 3));
    assertEquals(Set.of(attempt(OTHER, 1).toString(), attempt(APP, 3).toString()), stored().keySet(),
        "attempts 1 and 2 of the application are gone, another application's entries stay");
    assertEquals(200, call("POST", "/amrm/v1/blacklist", "{\"blacklistAdditions\":[\"nm9\"]}").statusCode());
    assertTrue(stored().get(attempt(APP, 3).toString()).contains(BlocklistRequestInterceptor.NMSS_KEY), "a write is stored under the live attempt");
    third.shutdown();
  }

  @Test
  void shutdownRemovesEverythingStoredUnderTheAttemptAndStoresNothingAfter() throws Exception {
    storeAsAmrmProxyService(attempt(APP, 1));
    storeAsAmrmProxyService(attempt(OTHER, 1));
    BlocklistRequestInterceptor first = pipeline(attempt(APP, 1));
    assertEquals(200, call("POST", "/amrm/v1/blacklist", "{\"blacklistAdditions\":[\"nm9\"]}").statusCode());
    assertEquals(Set.of("amrmtoken", BlocklistRequestInterceptor.NMSS_KEY, "user"), stored().get(attempt(APP, 1).toString()));

    // What AMRMProxyService#initializePipeline does when attempt 2's AM starts here: the old pipeline's shutdown.
    first.shutdown();
    assertEquals(Set.of(attempt(OTHER, 1).toString()), stored().keySet(), "the AMRMProxy's own user and token entries go too: nothing to rebuild");
    assertNull(first.proxyState(), "it holds no state");
    assertEquals(401, call("GET", "/amrm/v1/attempt", null).statusCode(), "and no longer answers for the application");
  }

  @Test
  void aRecoveredPipelineOfTheLiveAttemptServesWhatWasStored() throws Exception {
    ApplicationAttemptId live = attempt(APP, 2);
    amContainerRuns(live, 1);
    storeAsAmrmProxyService(live);
    pipeline(live).stopServing(); // the NodeManager process ends: its listener goes, its entries stay
    servedAndStopped(live);

    BlocklistRequestInterceptor after = recovered(live);
    assertNotNull(after.proxyState());
    assertEquals(Map.of("blocklist", List.of("nm9")), after.proxyState().blacklistView().get("owners"));
    assertTrue(call("GET", "/amrm/v1/attempt", null).body().contains(live.toString()));
    assertEquals(Set.of("amrmtoken", BlocklistRequestInterceptor.NMSS_KEY, "user"), stored().get(live.toString()));
    after.stopServing();
  }

  /** An allocate of the AM with this responseId, and the request the RM side got for it. */
  private static AllocateRequest allocate(BlocklistRequestInterceptor i, int responseId) throws Exception {
    i.allocate(AllocateRequest.newInstance(responseId, 0.5f, List.of(), List.of(), null));
    List<AllocateRequest> got = ((Interceptors.FakeRm) i.getNextInterceptor()).allocates;
    return got.get(got.size() - 1);
  }

  @Test
  void anUnblockWrittenBeforeTheAmSendsItsInterruptedAllocateAgainGoesWithTheNextOne() throws Exception {
    ApplicationAttemptId live = attempt(APP, 2);
    amContainerRuns(live, 1);
    storeAsAmrmProxyService(live);
    BlocklistRequestInterceptor before = pipeline(live);
    assertEquals(200, call("POST", "/amrm/v1/blacklist", "{\"blacklistAdditions\":[\"nm9\"]}").statusCode());
    assertEquals(List.of("nm9"), allocate(before, 4).getResourceBlacklistRequest().getBlacklistAdditions());
    // Request 5 reaches the RM; the NodeManager stops before its answer reaches the AM.
    allocate(before, 5);
    before.stopServing();
    BlocklistRequestInterceptor after = recovered(live);
    assertEquals(200, call("POST", "/amrm/v1/blacklist", "{\"blacklistRemovals\":[\"nm9\"]}").statusCode());
    // The AM sends 5 again: the RM answers it with its first answer and applies none of it.
    assertEquals(List.of("nm9"), allocate(after, 5).getResourceBlacklistRequest().getBlacklistRemovals());
    assertEquals(List.of("nm9"), allocate(after, 6).getResourceBlacklistRequest().getBlacklistRemovals(), "the unblock goes again");
    assertEquals(List.of(), allocate(after, 7).getResourceBlacklistRequest().getBlacklistRemovals(), "and then no more");
    after.stopServing();
  }

  @Test
  void aRecoveredPipelineOfAnAttemptWhoseAmIsGoneNeitherServesNorKeepsItsEntries() throws Exception {
    ApplicationAttemptId old = attempt(APP, 1);
    storeAsAmrmProxyService(old);
    servedAndStopped(old);
    // Its AM container ended and the NodeManager dropped it (the RM heard of it): none in the context.
    amContainerRuns(attempt(OTHER, 1), 1);

    BlocklistRequestInterceptor after = recovered(old);
    assertNull(after.proxyState(), "no state held");
    assertEquals(401, call("GET", "/amrm/v1/attempt", null).statusCode(), "not served");
    assertFalse(stored().containsKey(old.toString()), "its entries are removed, so the next restart does not rebuild it");
  }

  @Test
  void aRecoveredPipelineOfAnAttemptWhoseAmEndedJustBeforeTheRestartNeitherServesNorKeepsItsEntries() throws Exception {
    ApplicationAttemptId old = attempt(APP, 1);
    storeAsAmrmProxyService(old);
    servedAndStopped(old);
    // The RM failed the attempt and the NodeManager stopped its AM container, then restarted before
    // the RM acknowledged the end: the container is back in the context, completed in the store.
    amContainerRuns(old, 1);
    ContainerId am = storeLaunchedAm(old);
    assertNull(Liveness.notLiveHere(old, nm), "a launched AM container is live");
    store.storeContainerCompleted(am, 143);

    BlocklistRequestInterceptor after = recovered(old);
    assertFalse(after.recheckLiveness(), "already retired");
    assertNull(after.proxyState(), "no state held");
    assertEquals(401, call("GET", "/amrm/v1/attempt", null).statusCode(), "not served");
    assertFalse(stored().containsKey(old.toString()), "its entries are removed");
  }

  @Test
  void aRecoveredPipelineWhoseAmEndsJustAfterTheRestartRetiresAtTheNextRecheck() throws Exception {
    ApplicationAttemptId old = attempt(APP, 1);
    storeAsAmrmProxyService(old);
    servedAndStopped(old);
    // The NodeManager stopped while stopping the AM container: still launched in the store.
    amContainerRuns(old, 1);
    ContainerId am = storeLaunchedAm(old);

    BlocklistRequestInterceptor after = recovered(old);
    assertNotNull(after.proxyState(), "rebuilt as live");
    assertFalse(after.recheckLiveness(), "still live at the first re-check");
    assertEquals(200, call("GET", "/amrm/v1/attempt", null).statusCode());
    // The recovered NodeManager finds the process gone and records the end.
    store.storeContainerCompleted(am, 143);
    assertTrue(after.recheckLiveness(), "retired at the next re-check");
    assertNull(after.proxyState());
    assertEquals(401, call("GET", "/amrm/v1/attempt", null).statusCode());
    assertFalse(stored().containsKey(old.toString()));
  }

  @Test
  void aRecoveredPipelineOfASupersededAttemptLeavesTheSecretToTheLiveOne() throws Exception {
    ApplicationAttemptId old = attempt(APP, 1);
    ApplicationAttemptId live = attempt(APP, 2);
    storeAsAmrmProxyService(old);
    // The earlier attempt's AM container is still in the context (its end not yet acknowledged),
    // but the later attempt runs here (its AM): the RM allocates for the current attempt only.
    amContainerRuns(old, 1);
    amContainerRuns(live, 1);
    storeAsAmrmProxyService(live);
    // AMRMProxyService#recover loads every attempt's entries first, then rebuilds them one by one
    // (in a HashMap's order): the live attempt's init removes attempt 1's from the store, but the
    // loaded copy still rebuilds it.
    Map<String, byte[]> loaded = store.loadAMRMProxyState().getAppContexts().get(old);
    BlocklistRequestInterceptor current = initOnly(live, nm, conf);
    current.recover(store.loadAMRMProxyState().getAppContexts().get(live));
    assertFalse(stored().containsKey(old.toString()), "removed by the live attempt's init");
    BlocklistRequestInterceptor stale = initOnly(old, nm, conf);
    stale.recover(loaded);
    assertNull(stale.proxyState());
    assertFalse(stored().containsKey(old.toString()));
    assertTrue(call("GET", "/amrm/v1/attempt", null).body().contains(live.toString()), "the secret still selects the live attempt");
    current.stopServing();
  }

  @Test
  void withoutRecoveryNothingIsStoredOrRemoved() throws Exception {
    YarnConfiguration off = new YarnConfiguration(conf);
    off.setBoolean(YarnConfiguration.NM_RECOVERY_ENABLED, false);
    storeAsAmrmProxyService(attempt(APP, 1));
    NMStateStoreService nullStore = new org.apache.hadoop.yarn.server.nodemanager.recovery.NMNullStateStoreService();
    Context noRecovery = (Context) Proxy.newProxyInstance(Context.class.getClassLoader(), new Class<?>[] {Context.class}, (p, m, a) -> switch (m.getName()) {
      case "getNMStateStore" -> nullStore;
      case "getContainers" -> containers;
      default -> null;
    });
    BlocklistRequestInterceptor i = registered(initOnly(attempt(APP, 2), noRecovery, off), attempt(APP, 2));
    assertEquals(200, call("POST", "/amrm/v1/blacklist", "{\"blacklistAdditions\":[\"nm9\"]}").statusCode());
    i.shutdown();
    assertEquals(Set.of(attempt(APP, 1).toString()), stored().keySet(), "the LevelDB store was not touched through the null one");
  }

  @Test
  void anAmThatDidNotOptInPassesThroughUntouchedAndNothingOfItIsServedOrStored() throws Exception {
    ApplicationAttemptId plain = attempt(OTHER, 2);
    storeAsAmrmProxyService(attempt(OTHER, 1));
    storeAsAmrmProxyService(plain);
    BlocklistRequestInterceptor i = initOnly(plain, nm, conf);
    containers.put(ContainerId.newContainerId(plain, 1), Interceptors.nmContainer(plain, 1, ContainerType.APPLICATION_MASTER, false));
    i.registerApplicationMaster(RegisterApplicationMasterRequest.newInstance("localhost", 0, ""));
    assertEquals(Boolean.FALSE, i.optedIn());
    assertNull(i.proxyState(), "no state");

    org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest request = org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest.newInstance(
        1, 0.5f, List.of(), List.of(), org.apache.hadoop.yarn.api.records.ResourceBlacklistRequest.newInstance(List.of("own.host"), List.of()));
    i.allocate(request);
    Interceptors.FakeRm rm = (Interceptors.FakeRm) i.getNextInterceptor();
    assertTrue(rm.allocates.get(0) == request, "the AM's own request object is passed on");
    assertEquals(List.of("own.host"), rm.allocates.get(0).getResourceBlacklistRequest().getBlacklistAdditions(), "its blacklist untouched");

    String secret = Secrets.derive(new byte[32], OTHER.toString());
    HttpRequest get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/amrm/v1/attempt")).header("Authorization", "Bearer " + secret).build();
    assertEquals(401, http.send(get, HttpResponse.BodyHandlers.ofString()).statusCode(), "no binding for its secret");
    i.shutdown();
    assertEquals(Set.of("amrmtoken", "user"), stored().get(plain.toString()), "Hadoop's own entries are Hadoop's: left as they were");
    assertTrue(stored().containsKey(attempt(OTHER, 1).toString()), "an earlier attempt's too");
  }

  @Test
  void anOptedInAmBesideAPlainOneIsServed() throws Exception {
    ApplicationAttemptId plain = attempt(OTHER, 1);
    BlocklistRequestInterceptor p = initOnly(plain, nm, conf);
    containers.put(ContainerId.newContainerId(plain, 1), Interceptors.nmContainer(plain, 1, ContainerType.APPLICATION_MASTER, false));
    p.registerApplicationMaster(RegisterApplicationMasterRequest.newInstance("localhost", 0, ""));
    BlocklistRequestInterceptor served = pipeline(attempt(APP, 1));
    assertEquals(Boolean.TRUE, served.optedIn());
    // The AM container by fact (its token's type), as the NodeManager runs it.
    assertTrue(call("GET", "/amrm/v1/attempt", null).body().contains("\"amContainerId\":\"" + ContainerId.newContainerId(attempt(APP, 1), 1) + "\""));
    assertEquals(200, call("POST", "/amrm/v1/blacklist", "{\"blacklistAdditions\":[\"nm9\"]}").statusCode());
    assertEquals(Boolean.FALSE, p.optedIn());
    served.shutdown();
  }
}
