#!/usr/bin/env bash
# The JNI library must export only JNI entry points (Java_org_ksasl_*, JNI_OnLoad) and ksasl_*
# symbols, and every native method declared in Native.java must have its entry point.
set -euo pipefail
lib=${1:?usage: jni_exports.sh libksasl_jni.so}
native_java=bindings/java/src/main/java/org/ksasl/Native.java
exports=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
stray=$(grep -vE '^(Java_org_ksasl_Native_[A-Za-z0-9_]+|JNI_OnLoad|ksasl_[a-z0-9_]+)$' <<<"$exports" || true)
if [ -n "$stray" ]; then
    echo "unexpected exports from $lib:"; echo "$stray"; exit 1
fi
declared=$(grep -oE 'static native [^(]+ [a-zA-Z0-9]+\(' "$native_java" | sed -E 's/.* ([a-zA-Z0-9]+)\($/Java_org_ksasl_Native_\1/' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$exports"))
extra=$(comm -13 <(echo "$declared") <(grep '^Java_' <<<"$exports"))
if [ -n "$missing$extra" ]; then
    echo "Native.java and $lib disagree"; echo "missing: $missing"; echo "not declared: $extra"; exit 1
fi
echo "jni exports ok: $(grep -c '^Java_' <<<"$exports") native methods, JNI_OnLoad"
