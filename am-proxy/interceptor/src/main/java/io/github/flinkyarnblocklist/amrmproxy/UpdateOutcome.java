package io.github.flinkyarnblocklist.amrmproxy;

import java.util.Map;

/** The outcome of one owner's blacklist update: applied (with the versions) or refused whole. */
public abstract class UpdateOutcome {
  private UpdateOutcome() {}

  /** The union and owners after the change, and the entity tags after and before it. */
  public static final class Updated extends UpdateOutcome {
    private final Map<String, Object> view;
    private final String etag;
    private final String previousEtag;

    Updated(Map<String, Object> view, String etag, String previousEtag) {
      this.view = view;
      this.etag = etag;
      this.previousEtag = previousEtag;
    }

    public Map<String, Object> view() {
      return view;
    }

    public String etag() {
      return etag;
    }

    public String previousEtag() {
      return previousEtag;
    }
  }

  /** Nothing changed; the reason is the client's 400. */
  public static final class Refused extends UpdateOutcome {
    private final String error;

    Refused(String error) {
      this.error = error;
    }

    public String error() {
      return error;
    }
  }
}
