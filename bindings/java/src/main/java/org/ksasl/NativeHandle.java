package org.ksasl;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * The owner of one native object. Calls on objects that are safe to share (stores,
 * registries, configurations, validators, refreshers) may run from many threads at once (the
 * native side serializes what must be); calls on an exclusive object (an exchange, a
 * connection) run one at a time, a call waiting for the one in progress. {@link #close()}
 * waits for calls in progress, and later calls fail with {@link IllegalStateException}. An
 * object that is never closed is freed by a {@link Cleaner} once unreachable.
 *
 * <p>The guard is one {@code int}: the number of calls in progress, with the sign bit set
 * once closed. A call costs two atomic operations and nothing is allocated for it. An object
 * that every connection's thread calls (a registry, for each new exchange) counts its calls
 * instead in cells of its own, one per thread slot on separate cache lines, so that threads
 * do not take turns writing one line: a call increments its cell and then checks the closed
 * bit; {@link #close()} sets the bit and then waits for every cell to be zero (the atomic
 * operations are sequentially consistent, so one of the two sees the other).
 */
abstract class NativeHandle implements AutoCloseable {
    /**
     * Cleaners, each thread using one of them (handed out in turn): a {@link Cleaner} keeps its
     * registrations on one list under one lock, and every object registers at creation and
     * deregisters at {@link #close()}, so threads creating short-lived objects (an exchange per
     * login) would otherwise queue on that lock. One cleaner thread each.
     */
    private static final Cleaner[] CLEANERS = cleaners(Math.min(4, Runtime.getRuntime().availableProcessors()));
    private static final AtomicInteger NEXT_CLEANER = new AtomicInteger();
    private static final ThreadLocal<Cleaner> THREAD_CLEANER = ThreadLocal.withInitial(
            () -> CLEANERS[Math.floorMod(NEXT_CLEANER.getAndIncrement(), CLEANERS.length)]);
    private static final int CLOSED = Integer.MIN_VALUE;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(NativeHandle.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

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

    /** How many native objects the Cleaner freed (objects that were never closed). */
    private static final AtomicLong CLEANED = new AtomicLong();

    /** Cells of a striped guard, and the longs between two cells (128 bytes). */
    private static final int CELLS = 8;
    private static final int CELL_STRIDE = 16;
    private static final AtomicInteger NEXT_CELL = new AtomicInteger();
    private static final ThreadLocal<Integer> THREAD_CELL = ThreadLocal.withInitial(
            () -> Math.floorMod(NEXT_CELL.getAndIncrement(), CELLS) * CELL_STRIDE + CELL_STRIDE);

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

    private final long handle;
    /** Whether calls run one at a time (the native object is not safe to share). */
    private final boolean exclusive;
    private final Releaser releaser;
    private final Cleaner.Cleanable cleanable;
    /** Calls in progress; {@link #CLOSED} is set once closed. */
    private volatile int state;
    /** For an object many threads call at once: the calls in progress, by thread slot. */
    private final AtomicLongArray calls;

    private static Cleaner[] cleaners(int n) {
        Cleaner[] c = new Cleaner[Math.max(1, n)];
        for (int i = 0; i < c.length; i++) {
            c[i] = Cleaner.create();
        }
        return c;
    }

    NativeHandle(long handle, Free free) {
        this(handle, free, false);
    }

    NativeHandle(long handle, Free free, boolean exclusive) {
        this(handle, free, exclusive, false);
    }

    /**
     * @param striped whether calls are counted by thread slot: for a shareable object that
     *     every connection calls (see the class comment); not with {@code exclusive}
     */
    NativeHandle(long handle, Free free, boolean exclusive, boolean striped) {
        if (handle == 0) {
            throw new IllegalStateException("the native object could not be created");
        }
        this.handle = handle;
        this.exclusive = exclusive;
        // A cell's neighbours are padding, and so are the first and last 128 bytes.
        this.calls = striped && !exclusive ? new AtomicLongArray((CELLS + 2) * CELL_STRIDE) : null;
        this.releaser = new Releaser(handle, free);
        this.cleanable = THREAD_CLEANER.get().register(this, releaser);
    }

    private void enter() {
        int s = state;
        for (int spins = 0; s >= 0; spins++) {
            if (exclusive && s > 0) {
                pause(spins);
                s = state;
                continue;
            }
            int seen = (int) STATE.compareAndExchange(this, s, s + 1);
            if (seen == s) {
                return;
            }
            s = seen;
        }
        throw new IllegalStateException(getClass().getSimpleName() + " is closed");
    }

    private static void pause(int spins) {
        if (spins < 100) {
            Thread.onSpinWait();
        } else {
            LockSupport.parkNanos(50_000);
        }
    }

    private void exit() {
        STATE.getAndAdd(this, -1);
    }

    /** Counts a call in this thread's cell; returns the cell, to give back to {@link #exit(int)}. */
    private int enterStriped() {
        int cell = THREAD_CELL.get();
        calls.getAndIncrement(cell);
        if (state < 0) {
            calls.getAndDecrement(cell);
            throw new IllegalStateException(getClass().getSimpleName() + " is closed");
        }
        return cell;
    }

    /** Enters, by the object's kind of guard; -1: the shared count. */
    private int enterAny() {
        if (calls != null) {
            return enterStriped();
        }
        enter();
        return -1;
    }

    private void exit(int cell) {
        if (cell < 0) {
            exit();
        } else {
            calls.getAndDecrement(cell);
        }
    }

    /** Runs {@code call} with the live handle; fails if the object is closed. */
    final <T, E extends Exception> T with(Call<T, E> call) throws E {
        int cell = enterAny();
        try {
            return call.apply(handle);
        } finally {
            exit(cell);
            Reference.reachabilityFence(this);
        }
    }

    /** Runs {@code call} with the live handle; fails if the object is closed. */
    final <E extends Exception> void run(VoidCall<E> call) throws E {
        int cell = enterAny();
        try {
            call.apply(handle);
        } finally {
            exit(cell);
            Reference.reachabilityFence(this);
        }
    }

    /** Whether a striped guard still counts a call in progress. */
    private boolean stripedCallsInProgress() {
        if (calls == null) {
            return false;
        }
        for (int i = 1; i <= CELLS; i++) {
            if (calls.get(i * CELL_STRIDE) != 0) {
                return true;
            }
        }
        return false;
    }

    /** Fails as a call would once the object is closed. */
    final void ensureOpen() {
        if (state < 0) {
            throw new IllegalStateException(getClass().getSimpleName() + " is closed");
        }
    }

    /** Whether {@link #close()} has been called. */
    public final boolean isClosed() {
        return state < 0;
    }

    /** Frees the native object; idempotent; waits for calls in progress on other threads. */
    @Override
    public final void close() {
        int s = state;
        while (s >= 0) {
            int seen = (int) STATE.compareAndExchange(this, s, s | CLOSED);
            if (seen == s) {
                break;
            }
            s = seen;
        }
        if (s < 0) {
            return; // closed before
        }
        for (int spins = 0; state != CLOSED || stripedCallsInProgress(); spins++) {
            pause(spins);
        }
        releaser.closing = true;
        cleanable.clean();
    }
}
