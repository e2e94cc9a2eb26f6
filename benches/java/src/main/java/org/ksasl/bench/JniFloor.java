package org.ksasl.bench;

/**
 * JNI floors (src/main/c/jnifloor.c, built by run.sh), loaded from the path in the system
 * property {@code ksasl.bench.jnifloor}: an empty native method (the JNI transition alone),
 * and a Boolean boxed in native code with and without a per-call class lookup.
 */
final class JniFloor {
    private JniFloor() {}

    static final boolean LOADED = load();

    private static boolean load() {
        String path = System.getProperty("ksasl.bench.jnifloor");
        if (path == null || path.isEmpty()) {
            return false;
        }
        System.load(path);
        return true;
    }

    static native int nop(long handle, short apiKey, long nowMs);

    static native Object boxFindClass(boolean v);

    static native Object boxCached(boolean v);

    static void require() {
        if (!LOADED) {
            throw new IllegalStateException("run with -Dksasl.bench.jnifloor=path/to/libjnifloor.so (run.sh does)");
        }
    }
}
