package org.ksasl;

/**
 * Library facts. The binding's objects are {@link AutoCloseable}; objects never closed are
 * freed once unreachable. Shared objects (stores, registries, configurations, validators,
 * refreshers, trackers) are safe to use from many threads; authenticators and connections
 * serialize their calls and are meant to be driven by one thread at a time.
 */
public final class Ksasl {
    private Ksasl() {}

    /** The version of the Java classes, which equals the native library's (checked at load). */
    public static String version() {
        Native.init();
        return NativeLoader.JAVA_VERSION;
    }

    /** The version the native library reports. */
    public static String nativeVersion() {
        Native.init();
        return Native.version();
    }

    /** Where the native library was loaded from: "jar", "java.library.path" or "org.ksasl.native.path". */
    public static String nativeSource() {
        Native.init();
        return NativeLoader.source;
    }

    /**
     * Whether GSSAPI can be used: the system's GSS-API library (MIT Kerberos,
     * {@code libgssapi_krb5.so.2}) loads. It is loaded at first use, never linked; without it
     * GSSAPI calls fail with {@code GSSAPI_UNAVAILABLE} and nothing else changes.
     */
    public static boolean gssapiAvailable() {
        Native.init();
        return Native.gssapiAvailable();
    }
}
