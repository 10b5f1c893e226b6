package io.github.flinkyarnblocklist.amrmproxy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.server.nodemanager.recovery.NMStateStoreService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one attempt keeps in the NodeManager's state store (its AMRMProxy entries), so a
 * work-preserving NodeManager restart loses neither the owners' sets nor the completed ring; a
 * store that cannot recover keeps nothing, and nothing is written once the attempt is retired.
 */
final class AttemptStore {
  private static final Logger LOG = LoggerFactory.getLogger(AttemptStore.class);
  /** The durable record, beside AMRMProxyService's "user" and "amrmtoken" entries. */
  static final String KEY = "blocklist-interceptor.state";
  /** One entry per completed container, so a completion is one small write. */
  static final String RING_PREFIX = "blocklist-interceptor.completed.";
  /** Diagnostics kept per stored entry: the reader needs the exit status; the text only for a human. */
  static final int STORED_DIAGNOSTICS = 1000;

  private final NMStateStoreService nmss;
  private final ApplicationAttemptId attempt;
  /** The state's change count last stored; -1: nothing stored yet. */
  private long storedChanges = -1;
  private boolean retired;

  AttemptStore(NMStateStoreService nmss, ApplicationAttemptId attempt) {
    this.nmss = nmss != null && nmss.canRecover() ? nmss : null;
    this.attempt = attempt;
  }

  /** Whether the recovered entries hold any of this interceptor's: proof of an earlier opt-in. */
  static boolean holdsOwnEntries(Map<String, byte[]> recovered) {
    if (recovered == null) return false;
    for (String k : recovered.keySet()) {
      if (k.equals(KEY) || k.startsWith(RING_PREFIX)) return true;
    }
    return false;
  }

  /** Rewrites the record when the state changed since the last store: a few hundred bytes plus about 100 per live container. */
  synchronized void store(ProxyState state) {
    if (nmss == null || retired || state == null) return;
    // Read before the record: a change racing in makes the next store() write again.
    long changes = state.durableChanges();
    if (changes == storedChanges) return;
    byte[] record = Json.write(state.durable()).getBytes(StandardCharsets.UTF_8);
    try {
      nmss.storeAMRMProxyAppContextEntry(attempt, KEY, record);
      storedChanges = changes;
    } catch (IOException | RuntimeException e) {
      LOG.warn("blocklist AMRM proxy: cannot store its state for {} (a NodeManager restart would lose it): {}", attempt, e.toString());
    }
  }

  synchronized void storeRing(RingChange change) {
    if (nmss == null || retired || change.isEmpty()) return;
    try {
      for (Completed c : change.added()) {
        String d = c.diagnostics().length() > STORED_DIAGNOSTICS ? c.diagnostics().substring(0, STORED_DIAGNOSTICS) : c.diagnostics();
        List<Object> row = Arrays.<Object>asList(c.seq(), c.containerId(), c.nodeId(), (long) c.exitStatus(), d, c.finishedAt());
        nmss.storeAMRMProxyAppContextEntry(attempt, RING_PREFIX + c.containerId(), Json.write(row).getBytes(StandardCharsets.UTF_8));
      }
      for (Completed c : change.dropped()) nmss.removeAMRMProxyAppContextEntry(attempt, RING_PREFIX + c.containerId());
    } catch (IOException | RuntimeException e) {
      LOG.warn("blocklist AMRM proxy: cannot store completed containers of {} (a NodeManager restart would lose them): {}", attempt, e.toString());
    }
  }

  /**
   * Takes the recovered entries back into the state (AMRMProxyService#recover): the record whole
   * or not at all, the old ring's entries first in the new ring; entries that fell out or cannot
   * be read are removed. Returns a line for the log.
   */
  String recover(ProxyState state, Map<String, byte[]> recovered) {
    byte[] record = recovered.get(KEY);
    String why;
    try {
      why = record == null ? "none stored" : state.restore(Json.parse(new String(record, StandardCharsets.UTF_8)));
    } catch (Json.BadJson e) {
      why = e.getMessage();
    }
    if (why != null) LOG.warn("blocklist AMRM proxy for {}: stored state not recovered ({}); starting empty", attempt, why);
    else forgetStored(state);
    List<String> unreadable = new ArrayList<>();
    List<Completed> old = storedRing(recovered, unreadable);
    List<Completed> left = state.restoreRing(old);
    List<String> gone = new ArrayList<>(unreadable);
    for (Completed c : left) gone.add(RING_PREFIX + c.containerId());
    for (String k : gone) remove(k);
    return state.containers().size() + " live container(s), " + (old.size() - left.size())
        + " completed (" + unreadable.size() + " unreadable) and the blacklist " + state.blacklistView();
  }

  /** A restored record is stored again under this instance (its change count starts anew). */
  private void forgetStored(ProxyState state) {
    synchronized (this) {
      storedChanges = -1;
    }
    store(state);
  }

  private void remove(String key) {
    if (nmss == null) return;
    try {
      nmss.removeAMRMProxyAppContextEntry(attempt, key);
    } catch (IOException | RuntimeException e) {
      LOG.warn("blocklist AMRM proxy for {}: cannot remove {}: {}", attempt, key, e.toString());
    }
  }

  /** The stored ring entries among the recovered ones; unreadable ones are named in {@code unreadable}. */
  static List<Completed> storedRing(Map<String, byte[]> recovered, List<String> unreadable) {
    List<Completed> out = new ArrayList<>();
    for (Map.Entry<String, byte[]> e : recovered.entrySet()) {
      if (!e.getKey().startsWith(RING_PREFIX)) continue;
      Completed c = ringEntry(e.getValue());
      if (c == null) unreadable.add(e.getKey());
      else out.add(c);
    }
    return out;
  }

  private static Completed ringEntry(byte[] raw) {
    Object v;
    try {
      v = Json.parse(new String(raw, StandardCharsets.UTF_8));
    } catch (Json.BadJson e) {
      return null;
    }
    if (!(v instanceof List) || ((List<?>) v).size() != 6) return null;
    List<?> r = (List<?>) v;
    Class<?>[] types = {Long.class, String.class, String.class, Long.class, String.class, Long.class};
    for (int i = 0; i < types.length; i++) {
      if (!types[i].isInstance(r.get(i))) return null;
    }
    return new Completed((Long) r.get(0), (String) r.get(1), (String) r.get(2), ((Long) r.get(3)).intValue(), (String) r.get(4), (Long) r.get(5));
  }

  /** Nothing is stored after this, and everything stored under the attempt goes (AMRMProxyService's own entries with it). */
  synchronized void retire() {
    retired = true;
    if (nmss == null) return;
    try {
      nmss.removeAMRMProxyAppContext(attempt);
    } catch (IOException | RuntimeException e) {
      LOG.warn("blocklist AMRM proxy: cannot remove the stored entries of {}: {}", attempt, e.toString());
    }
  }

  /**
   * Removes what earlier attempts of the application stored here: AMRMProxyService#initializePipeline
   * removes the new attempt's entries when it replaces a pipeline, not the old one's, and left
   * behind they are rebuilt into a pipeline on every NodeManager restart, possibly in place of the
   * live attempt's. The RM never runs an earlier attempt again. One prefix removal each.
   */
  void removeEarlierAttempts() {
    if (nmss == null) return;
    for (int n = 1; n < attempt.getAttemptId(); n++) {
      ApplicationAttemptId earlier = ApplicationAttemptId.newInstance(attempt.getApplicationId(), n);
      try {
        nmss.removeAMRMProxyAppContext(earlier);
      } catch (IOException | RuntimeException e) {
        LOG.warn("blocklist AMRM proxy for {}: cannot remove the stored entries of {}: {}", attempt, earlier, e.toString());
      }
    }
  }
}
