package org.ksasl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Loads the packaged jar in fresh JVMs: from the jar on a clean classpath, from
 * java.library.path when the jar has no library, and refusing a version mismatch.
 */
class JarLoadIT {
    /** The project's version (failsafe passes it), which the jar and its native library must report. */
    private static final String VERSION = java.util.Objects.requireNonNull(
            System.getProperty("ksasl.version"), "the system property ksasl.version (failsafe sets it)");
    private static final Path JAR = Paths.get(System.getProperty("ksasl.jar", "target/ksasl-" + VERSION + ".jar"));
    private static final Path TEST_CLASSES = Paths.get("target/test-classes");

    private record Run(int exit, String output) {}

    private static Run java(String classpath, String... jvmArgs) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of(jvmArgs));
        cmd.add("-cp");
        cmd.add(classpath);
        cmd.add("org.ksasl.LoadCheck");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out;
        try (InputStream in = p.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM timed out");
        return new Run(p.exitValue(), out);
    }

    /** Unpacks the jar into {@code dir}, leaving out the native library. */
    private static void unpackWithoutNative(Path dir) throws IOException {
        try (ZipInputStream z = new ZipInputStream(Files.newInputStream(JAR))) {
            for (ZipEntry e; (e = z.getNextEntry()) != null; ) {
                if (e.isDirectory() || e.getName().contains("/native/")) {
                    continue;
                }
                Path target = dir.resolve(e.getName());
                Files.createDirectories(target.getParent());
                Files.copy(z, target);
            }
        }
    }

    @Test
    void loadsFromTheJarOnACleanClasspath() throws Exception {
        assertTrue(Files.isRegularFile(JAR), JAR + " must be packaged first");
        Run r = java(JAR + ":" + TEST_CLASSES, "-Djava.library.path=/nonexistent");
        assertEquals(0, r.exit(), r.output());
        assertTrue(r.output().contains("loaded-from=jar version=" + VERSION + " principal=User:alice"), r.output());
    }

    @Test
    void fallsBackToJavaLibraryPath(@TempDir Path tmp) throws Exception {
        Path classes = Files.createDirectories(tmp.resolve("classes"));
        unpackWithoutNative(classes);
        Path libdir = Files.createDirectories(tmp.resolve("lib"));
        try (ZipInputStream z = new ZipInputStream(Files.newInputStream(JAR))) {
            for (ZipEntry e; (e = z.getNextEntry()) != null; ) {
                if (e.getName().endsWith("libksasl_jni.so")) {
                    Files.copy(z, libdir.resolve("libksasl_jni.so"));
                }
            }
        }
        Run r = java(classes + ":" + TEST_CLASSES, "-Djava.library.path=" + libdir);
        assertEquals(0, r.exit(), r.output());
        assertTrue(r.output().contains("loaded-from=java.library.path"), r.output());

        // Without the library anywhere, loading fails with a message that says where it looked.
        Run missing = java(classes + ":" + TEST_CLASSES, "-Djava.library.path=/nonexistent");
        assertNotEquals(0, missing.exit());
        assertTrue(missing.output().contains("no native library for linux-x86_64 in the jar"), missing.output());
    }

    @Test
    void refusesANativeLibraryOfAnotherVersion(@TempDir Path tmp) throws Exception {
        Path classes = Files.createDirectories(tmp.resolve("classes"));
        try (ZipInputStream z = new ZipInputStream(Files.newInputStream(JAR))) {
            for (ZipEntry e; (e = z.getNextEntry()) != null; ) {
                if (e.isDirectory()) {
                    continue;
                }
                Path target = classes.resolve(e.getName());
                Files.createDirectories(target.getParent());
                Files.copy(z, target);
            }
        }
        Path props = classes.resolve("org/ksasl/ksasl-version.properties");
        Files.writeString(props, "version=9.9.9\n");
        Run r = java(classes + ":" + TEST_CLASSES);
        assertNotEquals(0, r.exit());
        assertTrue(r.output().contains("the native library is version " + VERSION + " but the Java classes are version 9.9.9"),
                r.output());
    }
}
