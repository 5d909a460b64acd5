package dev.turnstile.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.ReleaseWatch;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A client whose release subscription fails keeps its place in the store's waiting line (issue
 * 15.5): another client's threads cannot hand the lock among themselves past it. The failure is a
 * real one: a Redis user that may run everything but SUBSCRIBE and PSUBSCRIBE.
 */
class RedisWaitingLineTest {
    RedisClient admin;
    StatefulRedisConnection<String, String> raw;
    String user;
    RedisClient deafClient;
    RedisClient client;

    @BeforeEach
    void setUp() {
        admin = RedisClient.create(RedisServers.STANDALONE);
        raw = admin.connect();
        user = "turnstile-deaf-" + UUID.randomUUID().toString().substring(0, 8);
        raw.sync().aclSetuser(user, io.lettuce.core.AclSetuserArgs.Builder.on().addPassword("pw").allKeys().allChannels()
                .allCommands().removeCommand(io.lettuce.core.protocol.CommandType.SUBSCRIBE)
                .removeCommand(io.lettuce.core.protocol.CommandType.PSUBSCRIBE));
        RedisURI deaf = RedisURI.create(RedisServers.STANDALONE);
        deaf.setUsername(user);
        deaf.setPassword("pw".toCharArray());
        deafClient = RedisClient.create(deaf);
        client = RedisClient.create(RedisServers.STANDALONE);
    }

    @AfterEach
    void tearDown() {
        deafClient.shutdown();
        client.shutdown();
        raw.sync().aclDeluser(user);
        raw.close();
        admin.shutdown();
    }

    /** Runs {@code acquire} on a daemon thread; completes with the lease (released at once) or empty. */
    private static CompletableFuture<Optional<Long>> waitAndRelease(Turnstile t, String name) {
        CompletableFuture<Optional<Long>> done = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                Optional<Lease> lease = t.acquire(name, LockOptions.defaults(), Duration.ofSeconds(10));
                lease.ifPresent(Lease::release);
                done.complete(lease.map(Lease::fence));
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        }, "waiter");
        thread.setDaemon(true);
        thread.start();
        return done;
    }

    private void awaitWaiters(String key, long count, String what) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (raw.sync().zcard(key) < count) {
            assertThat(System.nanoTime() < until).as(what).isTrue();
            Thread.sleep(5);
        }
    }

    @Test
    void aWaiterWhoseSubscriptionFailedKeepsItsPlaceAndIsNotPassedByAHandOver() throws Exception {
        String name = "line-" + UUID.randomUUID().toString().substring(0, 8);
        try (RedisLockStore deafStore = RedisLockStore.builder(deafClient).build();
                RedisLockStore busyStore = RedisLockStore.builder(client).build();
                // The holder's other thread waits out a courtesy of up to 1 s after its client's release
                // (ended by the polling client's release), so that it does not race the polling client's
                // next poll: only a hand-over in the release's script could put it first.
                Turnstile busy = Turnstile.builder(busyStore).handOffCourtesy(Duration.ofSeconds(1)).build();
                Turnstile deaf = Turnstile.builder(deafStore).pollInterval(Duration.ofMillis(2), Duration.ofMillis(20)).build()) {
            try (ReleaseWatch w = deafStore.watchReleases(name, token -> { })) {
                assertThat(w).as("the subscription really fails for this user").isSameAs(ReleaseWatch.NONE);
            }
            try (ReleaseWatch w = deafStore.watchReleases(name, token -> { })) {
                assertThat(w).as("a failed subscription leaves nothing that looks subscribed").isSameAs(ReleaseWatch.NONE);
            }
            String key = busyStore.lockKey(name);
            Lease held = busy.tryAcquire(name).orElseThrow();
            CompletableFuture<Optional<Long>> deafWaiter = waitAndRelease(deaf, name);
            awaitWaiters(key + ":waiters", 1, "the polling client joined the store's waiting line");
            // A second thread of the holder's client waits too, behind it: a release may hand the
            // lock to it only if no other client waited longer.
            CompletableFuture<Optional<Long>> sameClientWaiter = waitAndRelease(busy, name);
            awaitWaiters(key + ":waiters", 2, "the holder's other thread joined the line");
            held.release();
            // Released, not handed over to the holder's other thread: the polling client, first in
            // line, holds the lock before that thread does, which the fences (issued in grant order)
            // show whatever the timing. (Reading the key right after the release raced: under load the
            // polling client had taken and released it, and the other thread taken it fairly, before
            // the read.)
            long deafFence = deafWaiter.get(10, TimeUnit.SECONDS).orElseThrow(() -> new AssertionError(
                    "the polling client never got its turn"));
            long sameClientFence = sameClientWaiter.get(10, TimeUnit.SECONDS).orElseThrow();
            assertThat(deafFence).as("released, not handed to the holder's other thread past the polling client "
                    + "(busy " + busy.owner() + ", deaf " + deaf.owner() + ")").isLessThan(sameClientFence);
        }
    }
}
