package io.github.flinkyarnblocklist.amrmproxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProxyStateTest {
  private static final String C1 = "container_1652313600000_0001_01_000002";
  private static final String C2 = "container_1652313600000_0001_01_000003";

  private static Outgoing allocate(ProxyState s, List<String> amAdd, List<String> amRem) {
    Outgoing o = s.beforeAllocate(amAdd, amRem, List.of());
    s.afterAllocate(o, List.of(), List.of(), 1L);
    return o;
  }

  @Test
  void sidecarAdditionReachesTheRmOnceAndItsRemovalToo() {
    ProxyState s = new ProxyState(8);
    assertInstanceOf(UpdateOutcome.Updated.class, s.updateBlacklist(null, List.of("n1"), List.of()));
    Outgoing o = allocate(s, List.of(), List.of());
    assertEquals(List.of("n1"), o.blacklistAdditions);
    assertEquals(List.of(), allocate(s, List.of(), List.of()).blacklistAdditions);
    s.updateBlacklist("blocklist", List.of(), List.of("n1"));
    assertEquals(List.of("n1"), allocate(s, List.of(), List.of()).blacklistRemovals);
  }

  @Test
  void theSidecarNeverRemovesWhatTheAmHoldsNorTheAmWhatTheSidecarHolds() {
    ProxyState s = new ProxyState(8);
    allocate(s, List.of("n1"), List.of());
    s.updateBlacklist(null, List.of("n1", "n2"), List.of());
    assertEquals(List.of("n2"), allocate(s, List.of(), List.of()).blacklistAdditions);
    s.updateBlacklist(null, List.of(), List.of("n1"));
    Outgoing o = allocate(s, List.of(), List.of());
    assertEquals(List.of(), o.blacklistRemovals, "n1 is still the AM's");
    // The AM lifts n2 of its own accord (it never held it): the sidecar still does.
    o = allocate(s, List.of(), List.of("n2"));
    assertEquals(List.of(), o.blacklistRemovals);
    @SuppressWarnings("unchecked")
    Map<String, List<String>> owners = (Map<String, List<String>>) s.blacklistView().get("owners");
    assertEquals(Map.of("am", List.of("n1"), "blocklist", List.of("n2")), owners);
    assertEquals(List.of("n1", "n2"), s.blacklistView().get("blacklist"));
  }

  @Test
  void aRemovalOfAHostNoOwnerHoldsIsPassedOnOnceForTheRmMayHoldItFromAnEarlierAttempt() {
    ProxyState s = new ProxyState(8);
    s.updateBlacklist(null, List.of(), List.of("inherited"));
    assertEquals(List.of("inherited"), allocate(s, List.of(), List.of()).blacklistRemovals);
    assertEquals(List.of(), allocate(s, List.of(), List.of()).blacklistRemovals, "once");
    // The AM's own removal of a host it never added in this attempt goes through as well.
    assertEquals(List.of("old"), allocate(s, List.of(), List.of("old")).blacklistRemovals);
    // ...but never a removal of a host another owner still holds.
    s.updateBlacklist(null, List.of("n1"), List.of());
    allocate(s, List.of(), List.of());
    assertEquals(List.of(), allocate(s, List.of(), List.of("n1")).blacklistRemovals);
  }

  @Test
  void removalWinsWithinOneCallAndStarOrAmOwnerAreRefusedWhole() {
    ProxyState s = new ProxyState(8);
    s.updateBlacklist(null, List.of("n1", "n2"), List.of("n2"));
    assertEquals(List.of("n1"), s.blacklistView().get("blacklist"));
    UpdateOutcome r = s.updateBlacklist(null, List.of("n3", "*"), List.of());
    assertInstanceOf(UpdateOutcome.Refused.class, r);
    assertTrue(((UpdateOutcome.Refused) r).error().contains("Cannot add * to the blacklist!"));
    assertInstanceOf(UpdateOutcome.Refused.class, s.updateBlacklist("am", List.of("n3"), List.of()));
    assertInstanceOf(UpdateOutcome.Refused.class, s.updateBlacklist("bad owner", List.of("n3"), List.of()));
    assertInstanceOf(UpdateOutcome.Refused.class, s.updateBlacklist(null, List.of(""), List.of()));
    assertEquals(List.of("n1"), s.blacklistView().get("blacklist"));
  }

  @Test
  void aFailedAllocateIsRetriedAndAnRmThatForgotTheAttemptGetsTheWholeUnion() {
    ProxyState s = new ProxyState(8);
    s.updateBlacklist(null, List.of("n1"), List.of());
    Outgoing o = s.beforeAllocate(List.of(), List.of(), List.of());
    s.allocateFailed(o, false);
    assertEquals(List.of("n1"), allocate(s, List.of(), List.of()).blacklistAdditions);
    o = s.beforeAllocate(List.of(), List.of(), List.of());
    s.allocateFailed(o, true);
    assertEquals(List.of("n1"), allocate(s, List.of(), List.of()).blacklistAdditions);
  }

  /** One allocate the RM answers, with the request's responseId. */
  private static Outgoing allocate(ProxyState s, int responseId) {
    Outgoing o = s.beforeAllocate(List.of(), List.of(), List.of(), responseId);
    s.afterAllocate(o, List.of(), List.of(), 1L);
    return o;
  }

  @Test
  void anAllocateSentAgainWithAnAnsweredResponseIdIsAppliedByNoRmSoItsChangeGoesWithTheNext() {
    ProxyState s = new ProxyState(8);
    s.updateBlacklist(null, List.of("n1"), List.of());
    assertEquals(List.of("n1"), allocate(s, 7).blacklistAdditions);
    // The AM's client lost the answer to request 7 and sends it again: the RM answers it with its
    // earlier answer and applies nothing, so what this copy carries must go again.
    s.updateBlacklist(null, List.of(), List.of("n1"));
    s.onRegistered(List.of(new Live(C1, "n1:8041", "n1:8042", "RUNNING")));
    s.release(List.of(C1));
    Outgoing repeat = allocate(s, 7);
    assertEquals(List.of("n1"), repeat.blacklistRemovals);
    assertEquals(List.of(C1), repeat.releases);
    Outgoing next = allocate(s, 8);
    assertEquals(List.of("n1"), next.blacklistRemovals, "the removal again: the RM never applied it");
    assertEquals(List.of(C1), next.releases, "the release again");
    Outgoing after = allocate(s, 9);
    assertEquals(List.of(), after.blacklistRemovals, "once applied, not again");
    assertEquals(List.of(), after.releases);
  }

  @Test
  void theFirstAllocateAfterARestoreMayRepeatOneTheOldInstanceSentSoItsChangeGoesAgain() throws Exception {
    ProxyState s = new ProxyState(8);
    s.updateBlacklist(null, List.of("n1"), List.of());
    allocate(s, 3);
    // The NodeManager stops while request 4 is at the RM; the restored instance gets it again.
    ProxyState next = restarted(s);
    next.updateBlacklist(null, List.of(), List.of("n1"));
    assertEquals(List.of("n1"), allocate(next, 4).blacklistRemovals);
    assertEquals(List.of("n1"), allocate(next, 5).blacklistRemovals, "the RM may have answered 4 with its earlier answer");
    assertEquals(List.of(), allocate(next, 6).blacklistRemovals);
  }

  @Test
  void releaseGoesIntoTheNextAllocateOnceAndTheContainerStopsBeingLive() {
    ProxyState s = new ProxyState(8);
    s.onRegistered(List.of(new Live(C1, "n1:8041", "n1:8042", "RUNNING")));
    Outgoing o = s.beforeAllocate(List.of(), List.of(), List.of());
    s.afterAllocate(o, List.of(new Live(C2, "n2:8041", "n2:8042", "RUNNING")), List.of(), 5L);
    assertEquals(2, s.containers().size());
    Map<String, Object> r = s.release(List.of(C1, "container_1652313600000_0001_01_000009"));
    assertEquals(List.of(C1), r.get("released"));
    assertEquals(List.of("container_1652313600000_0001_01_000009"), r.get("unknown"));
    assertEquals(1, s.containers().size());
    assertEquals(List.of(C1), s.release(List.of(C1)).get("unknown"), "released once");
    o = s.beforeAllocate(List.of(), List.of(), List.of());
    assertEquals(List.of(C1), o.releases);
    s.allocateFailed(o, false);
    o = s.beforeAllocate(List.of(), List.of(), List.of());
    assertEquals(List.of(C1), o.releases, "a failed allocate's releases go with the next one");
    s.afterAllocate(o, List.of(), List.of(new Finished(C1, -100, "Container released by application")), 9L);
    assertEquals(List.of(), s.beforeAllocate(List.of(), List.of(), List.of()).releases);
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> done = (List<Map<String, Object>>) s.completedAfter(0).get("containers");
    assertEquals(1, done.size());
    assertEquals("n1:8041", done.get(0).get("nodeId"), "the node of a released container is remembered");
    assertEquals(-100, done.get(0).get("exitStatus"));
  }

  @Test
  void aCompletionOfAContainerNeverSeenHasNoNodeAndIsLeftOutOfTheRing() {
    ProxyState s = new ProxyState(3);
    Outgoing o = s.beforeAllocate(List.of(), List.of(), List.of());
    s.afterAllocate(o, List.of(), List.of(new Finished(C1, -100, "previous attempt's AM")), 1L);
    assertEquals(0L, s.completedAfter(0).get("next"));
  }

  private static void allocateAndFinish(ProxyState s, String id, int exit, long now) {
    Outgoing o = s.beforeAllocate(List.of(), List.of(), List.of());
    s.afterAllocate(o, List.of(new Live(id, "n1:8041", "n1:8042", "RUNNING")), List.of(), now);
    o = s.beforeAllocate(List.of(), List.of(), List.of());
    s.afterAllocate(o, List.of(), List.of(new Finished(id, exit, "boom")), now);
  }

  @Test
  void completedRingIsBoundedAndPagedBySeq() {
    ProxyState s = new ProxyState(3);
    for (int i = 0; i < 5; i++) {
      allocateAndFinish(s, String.format("container_1652313600000_0001_01_%06d", i + 2), 1, i);
    }
    Map<String, Object> all = s.completedAfter(0);
    assertEquals(5L, all.get("next"));
    assertEquals(3, ((List<?>) all.get("containers")).size(), "the oldest fell out");
    assertEquals(1, ((List<?>) s.completedAfter(4).get("containers")).size());
    assertEquals(0, ((List<?>) s.completedAfter(5).get("containers")).size());
    assertEquals(3, ((List<?>) s.completedAfter(99).get("containers")).size(), "a proxy that restarted: whole ring");
  }

  @Test
  void everyCompletedPageCarriesTheEpochAndARestartedProxyDrawsANewOne() {
    ProxyState s = new ProxyState(8);
    for (int i = 0; i < 2; i++) {
      allocateAndFinish(s, String.format("container_1652313600000_0001_01_%06d", i + 2), 1, i);
    }
    Object epoch = s.completedAfter(0).get("epoch");
    assertTrue(epoch instanceof String && ((String) epoch).matches("^[0-9a-f]{16}$"), String.valueOf(epoch));
    assertEquals(epoch, s.completedAfter(2).get("epoch"), "one epoch for the state's whole life");
    // The same state's blacklist tag carries the same epoch: one draw names both numberings.
    assertTrue(s.etag().startsWith("\"" + epoch + "-"), s.etag());
    // A restarted proxy (a new state) numbers from 1 again, under another epoch, even when it has
    // already completed more than a reader's old cursor.
    ProxyState restarted = new ProxyState(8);
    for (int i = 0; i < 3; i++) {
      allocateAndFinish(restarted, String.format("container_1652313600000_0002_01_%06d", i + 2), 1, i);
    }
    Map<String, Object> page = restarted.completedAfter(0);
    assertEquals(3L, page.get("next"));
    assertNotEquals(epoch, page.get("epoch"));
  }

  @Test
  void theEtagMovesWithEveryChangeOfAnyOwnersSetAndOnlyThen() {
    ProxyState s = new ProxyState(8);
    String t0 = s.etag();
    assertTrue(t0.matches("^\"[0-9a-f]{16}-1\"$"), t0);
    UpdateOutcome.Updated u = (UpdateOutcome.Updated) s.updateBlacklist(null, List.of("n1"), List.of());
    assertEquals(t0, u.previousEtag());
    assertEquals(s.etag(), u.etag());
    assertNotEquals(t0, u.etag());
    // Nothing changes: the same tag, before and after.
    UpdateOutcome.Updated same = (UpdateOutcome.Updated) s.updateBlacklist(null, List.of("n1"), List.of());
    assertEquals(u.etag(), same.previousEtag());
    assertEquals(u.etag(), same.etag());
    // A refused update changes nothing, its tag included.
    s.updateBlacklist(null, List.of("*"), List.of());
    assertEquals(u.etag(), s.etag());
    // The AM's own blacklist (owner "am", from its allocate calls) moves it too; an allocate that
    // changes no set does not.
    allocate(s, List.of("n7"), List.of());
    String afterAm = s.etag();
    assertNotEquals(u.etag(), afterAm);
    allocate(s, List.of(), List.of());
    assertEquals(afterAm, s.etag());
    // Another owner's write between two of the sidecar's: its next update names a previous tag
    // that is not the one it last saw.
    s.updateBlacklist("speculation", List.of("n3"), List.of());
    UpdateOutcome.Updated mine = (UpdateOutcome.Updated) s.updateBlacklist(null, List.of("n2"), List.of());
    assertNotEquals(afterAm, mine.previousEtag());
  }

  @Test
  void aReaderHoldingTheCurrentTagGetsNoViewAndANewProxyNeverRepeatsATag() {
    ProxyState s = new ProxyState(8);
    s.updateBlacklist(null, List.of("n1"), List.of());
    String tag = s.etag();
    BlacklistRead held = s.blacklistRead(tag::equals);
    assertTrue(held.notModified());
    assertEquals(tag, held.etag());
    BlacklistRead full = s.blacklistRead(t -> false);
    assertEquals(tag, full.etag());
    assertEquals(List.of("n1"), full.view().get("blacklist"));
    // A restarted NodeManager or a new attempt makes a new state: the same history, other tags.
    ProxyState again = new ProxyState(8);
    assertNotEquals(new ProxyState(8).etag(), again.etag());
    again.updateBlacklist(null, List.of("n1"), List.of());
    assertNotEquals(tag, again.etag());
  }
  /** What a NodeManager restart does to the state: stored as JSON, read back by a new instance. */
  private static ProxyState restarted(ProxyState old) throws Json.BadJson {
    ProxyState next = new ProxyState(8);
    assertNull(next.restore(Json.parse(Json.write(old.durable()))));
    return next;
  }

  @Test
  void aNodeManagerRestartKeepsTheOwnersWhatTheRmHoldsAndTheLiveContainersButNotTheRing() throws Exception {
    ProxyState s = new ProxyState(8);
    s.onRegistered(List.of());
    allocate(s, List.of("am-own"), List.of());
    s.updateBlacklist(null, List.of("n2"), List.of());
    Outgoing o = s.beforeAllocate(List.of(), List.of(), List.of());
    s.afterAllocate(o, List.of(new Live(C1, "n1:8041", "n1:8042", "RUNNING"),
        new Live(C2, "n3:8041", "n3:8042", "RUNNING")), List.of(), 1L);
    allocateAndFinish(s, "container_1652313600000_0001_01_000009", 1, 2L);
    long before = s.durableChanges();
    Object epoch = s.completedAfter(0).get("epoch");

    ProxyState next = restarted(s);
    assertTrue(next.registered(), "the AM registered with the old instance and will not again");
    assertEquals(s.blacklistView(), next.blacklistView(), "each owner's set, the AM's included");
    assertEquals(List.of(C1, C2), next.containers().stream().map(Live::containerId).toList());
    Map<String, Object> ring = next.completedAfter(0);
    assertEquals(0L, ring.get("next"), "a new ring");
    assertNotEquals(epoch, ring.get("epoch"), "under a new epoch: readers start it from the beginning");
    assertNotEquals(s.etag(), next.etag());
    // The RM still holds the union: nothing to send again, and a removal is sent as a removal.
    assertEquals(List.of(), allocate(next, List.of(), List.of()).blacklistAdditions);
    next.updateBlacklist(null, List.of(), List.of("n2"));
    assertEquals(List.of("n2"), allocate(next, List.of(), List.of()).blacklistRemovals);
    // A container allocated before the restart that fails after it is placed on its node.
    o = next.beforeAllocate(List.of(), List.of(), List.of());
    next.afterAllocate(o, List.of(), List.of(new Finished(C2, 137, "killed")), 3L);
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> done = (List<Map<String, Object>>) next.completedAfter(0).get("containers");
    assertEquals(1, done.size());
    assertEquals("n3:8041", done.get(0).get("nodeId"));
    assertTrue(next.durableChanges() > 0 && s.durableChanges() == before);
  }

  @Test
  void aReleaseNotYetSentAndTheAmsOwnRemovalSurviveARestart() throws Exception {
    ProxyState s = new ProxyState(8);
    Outgoing o = s.beforeAllocate(List.of(), List.of(), List.of());
    s.afterAllocate(o, List.of(new Live(C1, "n1:8041", "n1:8042", "RUNNING")), List.of(), 1L);
    s.release(List.of(C1));
    ProxyState next = restarted(s);
    Outgoing first = next.beforeAllocate(List.of(), List.of(), List.of());
    assertEquals(List.of(C1), first.releases, "the release goes out with the new instance's first allocate");
    next.afterAllocate(first, List.of(), List.of(new Finished(C1, -100, "released")), 2L);
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> done = (List<Map<String, Object>>) next.completedAfter(0).get("containers");
    assertEquals("n1:8041", done.get(0).get("nodeId"), "its node is remembered across the restart");
  }

  @Test
  void anOwnerWrittenToTheNewInstanceBeforeItsRecoveryIsKeptAndABadRecordChangesNothing() throws Exception {
    ProxyState s = new ProxyState(8);
    s.updateBlacklist(null, List.of("old"), List.of());
    s.updateBlacklist("speculation", List.of("n5"), List.of());
    ProxyState next = new ProxyState(8);
    next.updateBlacklist(null, List.of("newer"), List.of());
    assertNull(next.restore(Json.parse(Json.write(s.durable()))));
    @SuppressWarnings("unchecked")
    Map<String, List<String>> owners = (Map<String, List<String>>) next.blacklistView().get("owners");
    assertEquals(Map.of("blocklist", List.of("newer"), "speculation", List.of("n5")), owners);

    ProxyState fresh = new ProxyState(8);
    fresh.updateBlacklist(null, List.of("kept"), List.of());
    Map<String, Object> view = fresh.blacklistView();
    for (String bad : List.of("[]", "{\"v\":2}", "{\"v\":1,\"am\":[1]}",
        "{\"v\":1,\"registered\":true,\"am\":[],\"owners\":{},\"sent\":[],\"passRemovals\":[],\"pendingReleases\":[],\"live\":[[\"c\"]],\"releasedNodes\":{}}")) {
      assertNotNull(fresh.restore(Json.parse(bad)), bad);
      assertEquals(view, fresh.blacklistView(), bad);
      assertFalse(fresh.registered(), bad);
    }
  }
  @Test
  void theOldRingComesFirstInTheNewOneRenumberedUnderTheNewEpochAndBounded() {
    ProxyState old = new ProxyState(8);
    for (int i = 0; i < 4; i++) allocateAndFinish(old, String.format("container_1652313600000_0001_01_%06d", i + 2), 137, 10L + i);
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> was = (List<Map<String, Object>>) old.completedAfter(0).get("containers");
    List<Completed> stored = new java.util.ArrayList<>();
    for (Map<String, Object> m : was) {
      stored.add(new Completed((Long) m.get("seq"), (String) m.get("containerId"), (String) m.get("nodeId"),
          (Integer) m.get("exitStatus"), (String) m.get("diagnostics"), (Long) m.get("finishedAt")));
    }
    java.util.Collections.reverse(stored);
    ProxyState next = new ProxyState(3);
    List<Completed> left = next.restoreRing(stored);
    assertEquals(List.of("container_1652313600000_0001_01_000002"), left.stream().map(Completed::containerId).toList(), "the oldest beyond the size");
    Map<String, Object> page = next.completedAfter(0);
    assertEquals(3L, page.get("next"));
    assertNotEquals(old.completedAfter(0).get("epoch"), page.get("epoch"));
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> now = (List<Map<String, Object>>) page.get("containers");
    assertEquals(List.of(1L, 2L, 3L), now.stream().map(m -> m.get("seq")).toList());
    assertEquals(List.of("container_1652313600000_0001_01_000003", "container_1652313600000_0001_01_000004",
        "container_1652313600000_0001_01_000005"), now.stream().map(m -> m.get("containerId")).toList(), "oldest first");
    // New completions follow, and the ring stays bounded: the one falling out is reported.
    Outgoing o = next.beforeAllocate(List.of(), List.of(), List.of());
    next.afterAllocate(o, List.of(new Live(C1, "n1:8041", "n1:8042", "RUNNING")), List.of(), 20L);
    o = next.beforeAllocate(List.of(), List.of(), List.of());
    RingChange change = next.afterAllocate(o, List.of(), List.of(new Finished(C1, 1, "x")), 21L);
    assertEquals(List.of(C1), change.added().stream().map(Completed::containerId).toList());
    assertEquals(4L, change.added().get(0).seq());
    assertEquals(List.of("container_1652313600000_0001_01_000003"), change.dropped().stream().map(Completed::containerId).toList());
  }

  @Test
  void storedRingEntriesAreReadBackAndUnreadableOnesAreNamed() {
    Map<String, byte[]> stored = new java.util.LinkedHashMap<>();
    stored.put("user", "u".getBytes());
    stored.put(BlocklistRequestInterceptor.NMSS_RING_PREFIX + C1,
        Json.write(List.of(3L, C1, "n1:8041", 137L, "killed", 5L)).getBytes());
    stored.put(BlocklistRequestInterceptor.NMSS_RING_PREFIX + C2, "[1,\"x\"]".getBytes());
    List<String> bad = new java.util.ArrayList<>();
    List<Completed> read = AttemptStore.storedRing(stored, bad);
    assertEquals(List.of(new Completed(3L, C1, "n1:8041", 137, "killed", 5L)), read);
    assertEquals(List.of(BlocklistRequestInterceptor.NMSS_RING_PREFIX + C2), bad);
  }
}
