package org.ksasl;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Properties;

/**
 * Loads the native library: first from the jar (resource
 * {@code /org/ksasl/native/<os>-<arch>/libksasl_jni.so}, copied to a temporary file), then from
 * {@code java.library.path}. The system property {@code org.ksasl.native.path} names a file to
 * load instead. After loading, the native version must equal the Java version.
 */
final class NativeLoader {
    private NativeLoader() {}

    /** The Java side's version, from the jar's build. */
    static final String JAVA_VERSION = readVersion();

    /** Where the library came from: "jar", "java.library.path" or "org.ksasl.native.path". */
    static String source;

    private static String readVersion() {
        try (InputStream in = NativeLoader.class.getResourceAsStream("ksasl-version.properties")) {
            if (in == null) {
                throw new IllegalStateException("ksasl-version.properties is missing from the jar");
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (IOException e) {
            throw new IllegalStateException("cannot read ksasl-version.properties", e);
        }
    }

    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (arch.equals("amd64") || arch.equals("x86_64")) {
            arch = "x86_64";
        } else if (arch.equals("aarch64") || arch.equals("arm64")) {
            arch = "aarch64";
        }
        if (os.startsWith("linux")) {
            os = "linux";
        } else if (os.startsWith("mac")) {
            os = "macos";
        }
        return os + "-" + arch;
    }

    static synchronized void load() {
        if (source != null) {
            return;
        }
        String explicit = System.getProperty("org.ksasl.native.path");
        if (explicit != null) {
            System.load(Path.of(explicit).toAbsolutePath().toString());
            source = "org.ksasl.native.path";
        } else if (!loadFromJar()) {
            try {
                System.loadLibrary("ksasl_jni");
            } catch (UnsatisfiedLinkError e) {
                UnsatisfiedLinkError err = new UnsatisfiedLinkError(
                        "ksasl: no native library for " + platform() + " in the jar, and none on java.library.path ("
                                + System.getProperty("java.library.path") + "): " + e.getMessage());
                err.initCause(e);
                throw err;
            }
            source = "java.library.path";
        }
        String nativeVersion = Native.version();
        if (!nativeVersion.equals(JAVA_VERSION)) {
            throw new UnsatisfiedLinkError("ksasl: the native library is version " + nativeVersion
                    + " but the Java classes are version " + JAVA_VERSION + " (loaded from " + source + ")");
        }
    }

    private static boolean loadFromJar() {
        String resource = "native/" + platform() + "/" + System.mapLibraryName("ksasl_jni");
        try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
            if (in == null) {
                return false;
            }
            Path dir = Files.createTempDirectory("ksasl-native");
            Path file = dir.resolve(System.mapLibraryName("ksasl_jni"));
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            System.load(file.toAbsolutePath().toString());
            // Once mapped, the file is no longer needed; remove it now rather than at exit.
            Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
            source = "jar";
            return true;
        } catch (IOException e) {
            throw new IllegalStateException("ksasl: cannot extract the native library " + resource, e);
        }
    }
}
