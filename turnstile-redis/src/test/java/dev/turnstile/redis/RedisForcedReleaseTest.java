package dev.turnstile.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.ReleaseOutcome;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A forced release reaches the holder at once even when a waiter of another client takes the lock
 * and releases it within the few milliseconds that unnamed waiters are told late (attack: the
 * waiter's release cancelled the telling, and the holder learnt of it at its next renewal).
 */
class RedisForcedReleaseTest {

    @Test
    void theHolderIsToldEvenIfAWaiterTakesAndReleasesTheLockAtOnce() throws Exception {
        try (LockStore holderStore = LockStores.open(RedisServers.STANDALONE);
                LockStore waiterStore = LockStores.open(RedisServers.STANDALONE);
                LockStore adminStore = LockStores.open(RedisServers.STANDALONE);
                Turnstile holder = Turnstile.builder(holderStore).build();
                Turnstile waiter = Turnstile.builder(waiterStore).build();
                Turnstile admin = Turnstile.builder(adminStore).build()) {
            for (int round = 0; round < 5; round++) {
                String name = "forced-" + UUID.randomUUID().toString().substring(0, 8);
                CompletableFuture<Long> told = new CompletableFuture<>();
                Lease lease = holder.tryAcquire(name, LockOptions.builder().lockAtMostFor(Duration.ofSeconds(30))
                        .keepAlive(true).onLost(loss -> told.complete(System.nanoTime())).build()).orElseThrow();
                CompletableFuture<Optional<Lease>> waiting = CompletableFuture.supplyAsync(() -> {
                    try {
                        Optional<Lease> l = waiter.acquire(name, LockOptions.defaults(), Duration.ofSeconds(10));
                        l.ifPresent(Lease::release); // at once: its release message follows the forced one
                        return l;
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
                Thread.sleep(400); // the waiter is queued, the holder's watch is set
                long forced = System.nanoTime();
                assertThat(admin.forceRelease(name)).isTrue();
                assertThat(waiting.get(10, TimeUnit.SECONDS)).as("the waiter got its turn").isPresent();
                long at = told.get(5, TimeUnit.SECONDS);
                assertThat(Duration.ofNanos(at - forced)).as("round %d: told by the store, not at a renewal (10 s)", round)
                        .isLessThan(Duration.ofSeconds(1));
                assertThat(lease.release()).isEqualTo(ReleaseOutcome.NOT_OWNER);
            }
        }
    }
}
