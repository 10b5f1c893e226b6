package io.github.flinkyarnblocklist.amrmproxy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listener's address and the application's secret, written owner-only into the application's
 * local directories, which YARN gives only to this application's containers ($LOCAL_DIRS): how
 * the sidecar in the AM container finds its proxy (scripts/launch-in-am.sh).
 */
final class Handoff {
  private static final Logger LOG = LoggerFactory.getLogger(Handoff.class);
  static final String JSON = "blocklist-amrm-proxy.json";
  static final String SECRET = "blocklist-amrm-proxy.secret";

  private final List<Path> files = new ArrayList<>();

  /** Writes both files into every local directory of the application that exists yet (the AM's localization makes them). */
  synchronized void write(Context nm, String user, String appId, String attemptId, String address, String secret) {
    if (nm == null || nm.getLocalDirsHandler() == null) return;
    for (String dir : nm.getLocalDirsHandler().getLocalDirs()) {
      Path appDir = Paths.get(dir, "usercache", user, "appcache", appId);
      if (!Files.isDirectory(appDir)) continue;
      Path secretFile = appDir.resolve(SECRET);
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("address", address);
      json.put("secretFile", secretFile.toString());
      json.put("applicationId", appId);
      json.put("appAttemptId", attemptId);
      String version = InterceptorVersion.get();
      if (version != null) json.put("interceptorVersion", version);
      try {
        writeOwnerOnly(secretFile, secret + "\n");
        writeOwnerOnly(appDir.resolve(JSON), Json.write(json) + "\n");
        if (!files.contains(secretFile)) {
          files.add(secretFile);
          files.add(appDir.resolve(JSON));
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

  synchronized void delete() {
    for (Path p : files) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException ignored) {
        // the application's directories are removed with the application anyway
      }
    }
    files.clear();
  }
}
