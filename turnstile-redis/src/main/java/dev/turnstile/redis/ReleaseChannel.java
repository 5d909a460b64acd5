package dev.turnstile.redis;

import dev.turnstile.spi.ReleaseListener;
import dev.turnstile.spi.ReleaseWatch;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The release notifications of one Redis store: one pub/sub connection, opened on first use, that
 * subscribes to {@code <lock key>:released} while someone in this JVM watches that lock.
 *
 * <p>The release scripts publish {@code "<token> <waiter id>"}, naming the longest-queued waiter,
 * or {@code "<token>"} when none is queued, or an empty token for a forced release. The named
 * waiter (or everyone, if none is named) is told at once; the others after
 * {@link #UNNAMED_WAKE_DELAY_MILLIS}, unless another release came in between (the lock is moving,
 * and they will be named in turn). So one process, not all of them, races for the lock.
 */
final class ReleaseChannel {
    private static final Logger log = LoggerFactory.getLogger(ReleaseChannel.class);

    /** How long the waiters not named by a release wait before they try too. */
    static final long UNNAMED_WAKE_DELAY_MILLIS = 5;

    private final Supplier<StatefulRedisPubSubConnection<String, String>> connector;
    /** Names this store in waiter queues: one per store, shared by its waiters. */
    private final String waiterId;
    private final String description;
    /** Takes this store's waiter off a lock's queue, by lock name (best effort). */
    private final Consumer<String> leaveQueue;
    private final Map<String, Watchers> listeners = new ConcurrentHashMap<>();
    private volatile @Nullable StatefulRedisPubSubConnection<String, String> pubSub;
    private boolean closed; // guarded by this

    /** The listeners on one channel, and how many messages it has had (to drop stale delayed wake-ups). */
    private static final class Watchers {
        final List<ReleaseListener> list = new CopyOnWriteArrayList<>();
        final AtomicLong messages = new AtomicLong();

        void tell(@Nullable String token) {
            list.forEach(x -> x.released(token));
        }
    }

    ReleaseChannel(Supplier<StatefulRedisPubSubConnection<String, String>> connector, String waiterId, String description,
            Consumer<String> leaveQueue) {
        this.connector = connector;
        this.waiterId = waiterId;
        this.description = description;
        this.leaveQueue = leaveQueue;
    }

    /**
     * Tells {@code listener} of every release of the lock {@code name} published on {@code channel}
     * until the returned watch is closed. A subscription that fails leaves waiting to polling and
     * returns {@link ReleaseWatch#NONE}.
     */
    ReleaseWatch watch(String name, String channel, ReleaseListener listener) {
        try {
            StatefulRedisPubSubConnection<String, String> ps = connection();
            boolean[] first = {false};
            listeners.compute(channel, (k, w) -> {
                Watchers x = w != null ? w : new Watchers();
                first[0] = x.list.isEmpty();
                x.list.add(listener);
                return x;
            });
            if (first[0]) {
                ps.sync().subscribe(channel);
            }
        } catch (RedisException e) {
            // Waiting still works by polling (the waiter keeps its place in the queue); only the prompt
            // wake-up is lost. The listener goes, or the next watch on this channel would take the
            // failed subscription for a live one.
            listeners.computeIfPresent(channel, (k, w) -> {
                w.list.remove(listener);
                return w.list.isEmpty() ? null : w;
            });
            log.warn("cannot subscribe to releases of '{}' on {}: {}", name, description, e.toString());
            return ReleaseWatch.NONE;
        }
        return () -> {
            boolean[] last = {false};
            listeners.computeIfPresent(channel, (k, w) -> {
                w.list.remove(listener);
                last[0] = w.list.isEmpty();
                return w.list.isEmpty() ? null : w;
            });
            StatefulRedisPubSubConnection<String, String> ps = pubSub;
            if (last[0] && ps != null && ps.isOpen()) {
                RedisFuture<Void> unused = ps.async().unsubscribe(channel); // nothing waits for it
                leaveQueue.accept(name);
            }
        };
    }

    /** Closes the pub/sub connection; a later {@link #watch} is refused by the store before it gets here. */
    synchronized void close() {
        closed = true;
        ScriptRunner.closeConnection(pubSub);
    }

    private StatefulRedisPubSubConnection<String, String> connection() {
        StatefulRedisPubSubConnection<String, String> p = pubSub;
        if (p == null) {
            synchronized (this) {
                if (closed) {
                    throw new IllegalStateException("the LockStore " + description + " is closed");
                }
                p = pubSub;
                if (p == null) {
                    StatefulRedisPubSubConnection<String, String> ps = connector.get();
                    ps.addListener(new RedisPubSubAdapter<>() {
                        @Override
                        public void message(String channel, String message) {
                            Watchers w = listeners.get(channel);
                            if (w != null) {
                                released(w, message == null ? "" : message);
                            }
                        }
                    });
                    pubSub = ps;
                    p = ps;
                }
            }
        }
        return p;
    }

    private void released(Watchers w, String message) {
        long n = w.messages.incrementAndGet();
        int space = message.lastIndexOf(' ');
        String token = space < 0 ? message : message.substring(0, space);
        String named = space < 0 ? null : message.substring(space + 1);
        String released = token.isEmpty() ? null : token;
        // A forced release (no token) is told to everyone at once: a holder must learn of it even if
        // a waiter takes the lock and releases it within the delay (which would cancel the telling).
        if (named == null || named.equals(waiterId) || released == null) {
            w.tell(released);
        } else {
            // Run on the JDK's delay thread itself: telling is quick, and on 2 cores the async pool
            // would start a thread per task.
            CompletableFuture.delayedExecutor(UNNAMED_WAKE_DELAY_MILLIS, TimeUnit.MILLISECONDS, Runnable::run).execute(() -> {
                if (w.messages.get() == n) {
                    w.tell(released);
                }
            });
        }
    }
}
