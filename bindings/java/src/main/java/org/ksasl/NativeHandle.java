package org.ksasl;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The owner of one native object. Calls run under a read lock, so objects that are safe to
 * share (stores, registries, configurations, validators, refreshers) can be used from many
 * threads at once; {@link #close()} takes the write lock, so it waits for calls in progress
 * and later calls fail with {@link IllegalStateException}. An object that is never closed is
 * freed by a {@link Cleaner} once unreachable.
 */
abstract class NativeHandle implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    /** Frees one native handle; holds no reference to the Java object. */
    interface Free {
        void free(long handle);
    }

    /** A native call on the handle. */
    interface Call<T, E extends Exception> {
        T apply(long handle) throws E;
    }

    /** A native call on the handle without a result. */
    interface VoidCall<E extends Exception> {
        void apply(long handle) throws E;
    }

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final Cleaner.Cleanable cleanable;
    private final Releaser releaser;
    private long handle;

    /** How many native objects the Cleaner freed (objects that were never closed). */
    private static final AtomicLong CLEANED = new AtomicLong();

    private static final class Releaser implements Runnable {
        private final long handle;
        private final Free free;
        /** Set by close() before it runs the release itself. */
        private volatile boolean closing;

        Releaser(long handle, Free free) {
            this.handle = handle;
            this.free = free;
        }

        @Override
        public void run() {
            free.free(handle);
            if (!closing) {
                CLEANED.incrementAndGet();
            }
        }
    }

    /** How many native objects the Cleaner has freed so far (for tests). */
    static long cleanedCount() {
        return CLEANED.get();
    }

    NativeHandle(long handle, Free free) {
        if (handle == 0) {
            throw new IllegalStateException("the native object could not be created");
        }
        this.handle = handle;
        this.releaser = new Releaser(handle, free);
        this.cleanable = CLEANER.register(this, releaser);
    }

    /** Runs {@code call} with the live handle; fails if the object is closed. */
    final <T, E extends Exception> T with(Call<T, E> call) throws E {
        ReentrantReadWriteLock.ReadLock r = lock.readLock();
        r.lock();
        try {
            long h = handle;
            if (h == 0) {
                throw new IllegalStateException(getClass().getSimpleName() + " is closed");
            }
            return call.apply(h);
        } finally {
            r.unlock();
            Reference.reachabilityFence(this);
        }
    }

    /** Runs {@code call} with the live handle; fails if the object is closed. */
    final <E extends Exception> void run(VoidCall<E> call) throws E {
        this.<Void, E>with(h -> {
            call.apply(h);
            return null;
        });
    }

    /** Whether {@link #close()} has been called. */
    public final boolean isClosed() {
        ReentrantReadWriteLock.ReadLock r = lock.readLock();
        r.lock();
        try {
            return handle == 0;
        } finally {
            r.unlock();
        }
    }

    /** Frees the native object; idempotent; waits for calls in progress on other threads. */
    @Override
    public final void close() {
        ReentrantReadWriteLock.WriteLock w = lock.writeLock();
        w.lock();
        try {
            if (handle != 0) {
                handle = 0;
                releaser.closing = true;
                cleanable.clean();
            }
        } finally {
            w.unlock();
        }
    }
}
