package io.github.flinkyarnblocklist.matrix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.flinkyarnblocklist.amrmproxy.BlocklistRequestInterceptor;
import io.github.flinkyarnblocklist.amrmproxy.Json;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.apache.hadoop.util.VersionInfo;
import org.junit.jupiter.api.Test;

/**
 * The one interceptor jar on this module's Hadoop: Java 8 class files only, and the calls whose
 * names differ between Hadoop releases link. Runs in the interceptor module (3.5, its classes
 * directory) and in each matrix module (3.3, 3.4: the packaged jar).
 */
class InterceptorJarTest {
  /** Class-file major version of Java 8. */
  private static final int JAVA_8 = 52;

  @Test
  void everyClassFileIsJava8() throws Exception {
    Path where = Paths.get(BlocklistRequestInterceptor.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Map<String, Integer> majors = new TreeMap<>();
    if (Files.isDirectory(where)) {
      try (Stream<Path> files = Files.walk(where)) {
        for (Path p : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
          try (InputStream in = Files.newInputStream(p)) {
            majors.put(where.relativize(p).toString(), major(in));
          }
        }
      }
    } else {
      try (JarFile jar = new JarFile(where.toFile())) {
        for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements();) {
          JarEntry entry = e.nextElement();
          if (!entry.getName().endsWith(".class")) continue;
          try (InputStream in = jar.getInputStream(entry)) {
            majors.put(entry.getName(), major(in));
          }
        }
      }
    }
    assertTrue(majors.size() > 20, "the interceptor's classes were found at " + where + ": " + majors.keySet());
    List<String> newer = new ArrayList<>();
    majors.forEach((name, major) -> {
      if (major != JAVA_8) newer.add(name + " (" + major + ")");
    });
    assertEquals(List.of(), newer, "class files not of Java 8 in " + where);
  }

  private static int major(InputStream in) throws IOException {
    DataInputStream d = new DataInputStream(in);
    if (d.readInt() != 0xCAFEBABE) throw new IOException("not a class file");
    d.readUnsignedShort();
    return d.readUnsignedShort();
  }

  @Test
  void theNodeManagerContextGetterOfThisHadoopIsFound() throws Exception {
    Class<?> shim = Class.forName("io.github.flinkyarnblocklist.amrmproxy.NmContexts");
    Method name = shim.getDeclaredMethod("getterName");
    name.setAccessible(true);
    // Hadoop 3.3 spells it getNMCotext (sic), 3.4 and later getNMContext.
    String expected = VersionInfo.getVersion().startsWith("3.3.") ? "getNMCotext" : "getNMContext";
    assertEquals(expected, name.invoke(null), "on Hadoop " + VersionInfo.getVersion());
  }

  @Test
  void jsonGoesThroughThisHadoopsJackson() throws Exception {
    assertEquals("{\"a\":[1,\"b\"]}", Json.write(Json.parse("{\"a\":[1,\"b\"]}")));
  }
}
