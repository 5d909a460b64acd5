package dev.turnstile.redis;

import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.Deque;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The connections a standalone or Sentinel store sends its acknowledged writes on: a write and
 * the {@code WAIT} after it. {@code WAIT} covers what its own connection wrote, so it must follow
 * the write there, and the server answers nothing else on that connection until the replicas have
 * acknowledged: on the store's one shared connection, concurrent acquires queued behind each
 * other's waits (8 threads: 1.87× the floor, see docs/benchmarks.md). Here each write has a
 * connection to itself while it waits. Connections are opened as concurrency needs them, at most
 * {@link #MAX}, and kept; one that broke is dropped and a later write opens another.
 */
final class AckConnections {
    /** The most writes that wait for replicas at once; more wait for a connection (they would wait on one anyway). */
    static final int MAX = 8;

    private final Supplier<StatefulConnection<String, String>> connector;
    private final Semaphore permits = new Semaphore(MAX);
    private final Deque<StatefulRedisConnection<String, String>> idle = new ConcurrentLinkedDeque<>();
    /** Every connection opened and not yet dropped, idle or in use: what {@link #close} closes. */
    private final Set<StatefulConnection<String, String>> opened = ConcurrentHashMap.newKeySet();
    private boolean closed; // guarded by this

    AckConnections(Supplier<StatefulConnection<String, String>> connector) {
        this.connector = connector;
    }

    /**
     * Runs {@code use} on a connection of its own.
     *
     * @param maxWait how long to wait for a connection when {@link #MAX} writes are waiting already
     * @throws RedisException if no connection came free in time, the thread was interrupted, or a
     *     connection could not be opened; or as {@code use} throws
     */
    <T> T with(Duration maxWait, Function<StatefulRedisConnection<String, String>, T> use) {
        try {
            if (!permits.tryAcquire(maxWait.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new RedisCommandTimeoutException("no connection came free for a write that waits for replicas within "
                        + maxWait.toMillis() + " ms (" + MAX + " such writes were waiting)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedisCommandInterruptedException(e);
        }
        try {
            StatefulRedisConnection<String, String> c = borrow();
            boolean keep = false;
            try {
                T result = use.apply(c);
                keep = c.isOpen();
                return result;
            } finally {
                giveBack(c, keep);
            }
        } finally {
            permits.release();
        }
    }

    @SuppressWarnings("unchecked") // not Cluster: the connector makes StatefulRedisConnections
    private StatefulRedisConnection<String, String> borrow() {
        StatefulRedisConnection<String, String> c = idle.pollFirst();
        if (c != null) {
            return c;
        }
        synchronized (this) {
            if (closed) {
                throw new RedisException("the store is closed");
            }
            // Under the lock close() takes: a connection opened while the store closes must be closed by it.
            c = (StatefulRedisConnection<String, String>) connector.get();
            opened.add(c);
            return c;
        }
    }

    /** Keeps a connection for the next write, or closes it (broken, or the store closed meanwhile). */
    private void giveBack(StatefulRedisConnection<String, String> c, boolean keep) {
        synchronized (this) {
            if (keep && !closed) {
                idle.addFirst(c);
                return;
            }
            opened.remove(c);
        }
        ScriptRunner.closeConnection(c);
    }

    /** Closes every connection, those in use too: a write still waiting then fails, as it would on the shared connection. */
    void close() {
        synchronized (this) {
            closed = true;
            idle.clear();
        }
        opened.forEach(ScriptRunner::closeConnection);
        opened.clear();
    }
}
