package io.github.flinkyarnblocklist.amrmproxy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.hadoop.conf.Configuration;

/**
 * The per-application proxy secret: HMAC-SHA256 of the application id under a key shared by the
 * NodeManagers, so a new attempt on another host has the same one and no secret is ever stored.
 */
final class Secrets {
  /** Without a configured key each NodeManager process draws its own. */
  private static final byte[] PROCESS_KEY = new byte[32];
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  static {
    new SecureRandom().nextBytes(PROCESS_KEY);
  }

  private Secrets() {}

  static byte[] readKey(Configuration conf) throws IOException {
    String file = conf.getTrimmed(BlocklistRequestInterceptor.SECRET_KEY_FILE, "");
    if (file.isEmpty()) return PROCESS_KEY;
    byte[] k = Files.readAllBytes(Paths.get(file));
    if (k.length < 16) throw new IOException(BlocklistRequestInterceptor.SECRET_KEY_FILE + " " + file + " holds fewer than 16 bytes");
    return k;
  }

  static String derive(byte[] key, String applicationId) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return hex(mac.doFinal(applicationId.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Bindings are looked up by the secret's digest, so no comparison ever runs over the secret itself. */
  static String digest(String secret) {
    try {
      return hex(MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  static String hex(byte[] bytes) {
    char[] out = new char[bytes.length * 2];
    for (int i = 0; i < bytes.length; i++) {
      out[2 * i] = HEX[(bytes[i] >> 4) & 0xf];
      out[2 * i + 1] = HEX[bytes[i] & 0xf];
    }
    return new String(out);
  }
}
