package io.github.flinkyarnblocklist.matrix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.flinkyarnblocklist.amrmproxy.BlocklistRequestInterceptor;
import io.github.flinkyarnblocklist.amrmproxy.Json;
import java.io.ByteArrayInputStream;
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
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
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
  /** The JDK, and the jars of a NodeManager's classpath the interceptor may use (Hadoop's own, its Jackson, SLF4J). */
  private static final Pattern NODE_MANAGER_JARS = Pattern.compile(
      "jdk|(hadoop-(common|auth|annotations|yarn-api|yarn-common|yarn-server-common|yarn-server-nodemanager)|jackson-(core|databind|annotations)|slf4j-api)-[0-9][0-9.]*\\.jar");

  /** The jar's class files by name: the packaged jar in the matrix modules, the classes directory in the interceptor module. */
  private static Map<String, byte[]> classFiles() throws Exception {
    Path where = Paths.get(BlocklistRequestInterceptor.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Map<String, byte[]> out = new TreeMap<>();
    if (Files.isDirectory(where)) {
      try (Stream<Path> files = Files.walk(where)) {
        for (Path p : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
          out.put(where.relativize(p).toString(), Files.readAllBytes(p));
        }
      }
    } else {
      try (JarFile jar = new JarFile(where.toFile())) {
        for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements();) {
          JarEntry entry = e.nextElement();
          if (!entry.getName().endsWith(".class")) continue;
          try (InputStream in = jar.getInputStream(entry)) {
            out.put(entry.getName(), in.readAllBytes());
          }
        }
      }
    }
    assertTrue(out.size() > 20, "the interceptor's classes were found at " + where + ": " + out.keySet());
    return out;
  }

  @Test
  void everyClassFileIsJava8() throws Exception {
    List<String> newer = new ArrayList<>();
    for (Map.Entry<String, byte[]> c : classFiles().entrySet()) {
      int major = major(new ByteArrayInputStream(c.getValue()));
      if (major != JAVA_8) newer.add(c.getKey() + " (" + major + ")");
    }
    assertEquals(List.of(), newer, "class files not of Java 8");
  }

  /**
   * Every method, constructor and field the jar calls outside itself exists in this Hadoop release
   * (its Jackson, SLF4J, Hadoop's own classes) with the same descriptor, and comes from a jar a
   * NodeManager ships: a call that links on 3.5 only fails here, not in a NodeManager at run time.
   */
  @Test
  void everyMemberTheJarUsesIsOnThisReleasesNodeManagerClasspath() throws Exception {
    Map<String, byte[]> classes = classFiles();
    Set<String> own = new TreeSet<>();
    for (String name : classes.keySet()) own.add(name.substring(0, name.length() - ".class".length()));
    List<String> missing = new ArrayList<>();
    Set<String> jars = new TreeSet<>();
    int checked = 0;
    for (byte[] bytes : classes.values()) {
      for (ClassReferences.Ref ref : ClassReferences.read(new ByteArrayInputStream(bytes))) {
        if (own.contains(ref.owner) || ref.owner.startsWith("[")) continue;
        checked++;
        Class<?> owner;
        try {
          owner = Class.forName(ref.owner.replace('/', '.'), false, InterceptorJarTest.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
          missing.add(ref + " (no such class)");
          continue;
        }
        if (!Members.resolves(owner, ref)) missing.add(ref.toString());
        jars.add(Members.jarOf(owner));
      }
    }
    assertTrue(checked > 100, "references found: " + checked);
    assertEquals(List.of(), missing, "on Hadoop " + VersionInfo.getVersion());
    List<String> foreign = new ArrayList<>();
    for (String jar : jars) if (!NODE_MANAGER_JARS.matcher(jar).matches()) foreign.add(jar);
    assertEquals(List.of(), foreign, "jars a NodeManager does not ship, used by the interceptor (all: " + jars + ")");
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
  void theJarKnowsTheVersionItWasBuiltAs() throws Exception {
    Method get = Class.forName("io.github.flinkyarnblocklist.amrmproxy.InterceptorVersion").getDeclaredMethod("get");
    get.setAccessible(true);
    assertEquals(System.getProperty("blocklist.expectedInterceptorVersion"), get.invoke(null), "what GET /amrm/v1/attempt calls interceptorVersion");
  }

  @Test
  void jsonGoesThroughThisHadoopsJackson() throws Exception {
    assertEquals("{\"a\":[1,\"b\"]}", Json.write(Json.parse("{\"a\":[1,\"b\"]}")));
  }
}
