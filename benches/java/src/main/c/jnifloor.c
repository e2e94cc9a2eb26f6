/* JNI floors for the binding's per-call costs, built by benches/java/run.sh:
 * - nop: a static native method with the gate's signature (long, short, long) -> int that does
 *   nothing: the JNI transition alone;
 * - boxFindClass / boxCached: a java.lang.Boolean made from native code the way the binding's
 *   jbool_box does it (FindClass + GetMethodID + NewObject on every call, as jni-rs does for a
 *   class given by name), and with the class and constructor looked up once. */
#include <jni.h>

JNIEXPORT jint JNICALL Java_org_ksasl_bench_JniFloor_nop(JNIEnv *env, jclass cls, jlong h, jshort k, jlong now) {
    (void)env; (void)cls; (void)h; (void)now;
    return k == 17 ? 1 : 0;
}

JNIEXPORT jobject JNICALL Java_org_ksasl_bench_JniFloor_boxFindClass(JNIEnv *env, jclass cls, jboolean v) {
    (void)cls;
    jclass boolean = (*env)->FindClass(env, "java/lang/Boolean");
    if (boolean == NULL) {
        return NULL;
    }
    jmethodID init = (*env)->GetMethodID(env, boolean, "<init>", "(Z)V");
    if (init == NULL) {
        return NULL;
    }
    jobject o = (*env)->NewObject(env, boolean, init, v);
    (*env)->DeleteLocalRef(env, boolean);
    return o;
}

static jclass boolean_class;
static jmethodID boolean_init;

JNIEXPORT jobject JNICALL Java_org_ksasl_bench_JniFloor_boxCached(JNIEnv *env, jclass cls, jboolean v) {
    (void)cls;
    if (boolean_class == NULL) {
        jclass local = (*env)->FindClass(env, "java/lang/Boolean");
        if (local == NULL) {
            return NULL;
        }
        boolean_init = (*env)->GetMethodID(env, local, "<init>", "(Z)V");
        boolean_class = (*env)->NewGlobalRef(env, local);
        (*env)->DeleteLocalRef(env, local);
    }
    return (*env)->NewObject(env, boolean_class, boolean_init, v);
}
