package dev.turnstile.redis;

import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The {@code WAIT}s of one connection, shared by the writes that need them (a group commit).
 * {@code WAIT} blocks the connection it is sent on until the replicas have every write the
 * connection sent before it, so a {@code WAIT} after each write made threads that share the
 * connection queue behind each other's waits. Here at most one {@code WAIT} is in flight: a write
 * sent while none is gets one right behind it; the writes sent while one is in flight are covered
 * together by the next, sent as soon as it returns (after all of them: one connection keeps its
 * commands in order, and each write is sent under this object's lock with its turn decided there).
 * Every write and its {@code WAIT} stay on the one connection, so the order between a lease's write
 * and its later commands (its undo, extend, release) is the order they were sent in.
 */
final class ReplicaWaits {
    /** The {@code WAIT} in flight, or null. Guarded by this. */
    private @Nullable CompletableFuture<Long> inFlight;
    /** What the writes sent while a {@code WAIT} is in flight will get from the next one, or null. Guarded by this. */
    private @Nullable CompletableFuture<Long> next;
    /** The most replicas any of those writes needs. Guarded by this. */
    private int nextRequired;

    /**
     * A write sent, and the reply of the {@code WAIT} that covers it.
     *
     * @param write the write's reply
     * @param acked how many replicas acknowledged it (and every earlier write of the connection)
     */
    record Sent<T>(RedisFuture<T> write, CompletableFuture<Long> acked) {}

    /**
     * Sends a write and has a {@code WAIT} for {@code required} replicas cover it.
     *
     * @param async the connection's commands, on which both go
     * @param write sends the write on {@code async}
     * @param required how many replicas must acknowledge it
     * @param ackMillis how long a {@code WAIT} blocks at most
     */
    synchronized <T> Sent<T> send(RedisClusterAsyncCommands<String, String> async, Supplier<RedisFuture<T>> write,
            int required, long ackMillis) {
        RedisFuture<T> sent = write.get();
        CompletableFuture<Long> in = inFlight;
        if (in != null && !in.isDone()) {
            CompletableFuture<Long> n = next;
            if (n == null) {
                n = new CompletableFuture<>();
                next = n;
                nextRequired = required;
            } else {
                nextRequired = Math.max(nextRequired, required);
            }
            return new Sent<>(sent, n);
        }
        // None in flight (one may have just returned, its successor not sent yet): this WAIT covers
        // this write and any that were left for the next one.
        CompletableFuture<Long> waiting = next;
        int wanted = waiting == null ? required : Math.max(required, nextRequired);
        next = null;
        CompletableFuture<Long> wait = startWait(async, wanted, ackMillis);
        if (waiting != null) {
            relay(wait, waiting);
        }
        return new Sent<>(sent, wait);
    }

    /** Sends a {@code WAIT}; when it returns, the next one goes out for the writes sent meanwhile. Under this lock. */
    private CompletableFuture<Long> startWait(RedisClusterAsyncCommands<String, String> async, int required, long ackMillis) {
        CompletableFuture<Long> wait = async.waitForReplication(required, ackMillis).toCompletableFuture();
        inFlight = wait;
        // Runs on the connection's I/O thread (or here, at once, if the WAIT failed at once): sending
        // a command from there does not block.
        CompletableFuture<?> unused = wait.whenComplete((acks, failure) -> waitReturned(async, wait, ackMillis));
        return wait;
    }

    private synchronized void waitReturned(RedisClusterAsyncCommands<String, String> async, CompletableFuture<Long> returned,
            long ackMillis) {
        if (inFlight == returned) {
            inFlight = null;
        }
        CompletableFuture<Long> waiting = next;
        if (inFlight != null || waiting == null) {
            return;
        }
        next = null;
        relay(startWait(async, nextRequired, ackMillis), waiting);
    }

    private static void relay(CompletableFuture<Long> from, CompletableFuture<Long> to) {
        CompletableFuture<?> unused = from.whenComplete((acks, failure) -> {
            if (failure != null) {
                to.completeExceptionally(failure);
            } else {
                to.complete(acks);
            }
        });
    }

    /**
     * A reply within {@code limitNanos}, failing as Lettuce's own awaits do: a timeout as
     * {@link RedisCommandTimeoutException}, an interrupt as {@link RedisCommandInterruptedException}
     * (the flag kept), a failed command with its own {@link RedisException}. A shared {@code WAIT} is
     * not cancelled on a timeout: other writes count on it.
     */
    static long await(CompletableFuture<Long> reply, long limitNanos) {
        try {
            return reply.get(limitNanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new RedisCommandTimeoutException("WAIT for the replicas timed out after "
                    + TimeUnit.NANOSECONDS.toMillis(limitNanos) + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedisCommandInterruptedException(e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw cause instanceof RedisException r ? r : new RedisException(cause);
        }
    }
}
