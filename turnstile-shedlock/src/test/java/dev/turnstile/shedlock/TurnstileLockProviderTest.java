package dev.turnstile.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.Lease;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStores;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What the bridge adds to ShedLock's contract: the fence, ShedLock's executor, LockAssert and LockExtender, bad input. */
class TurnstileLockProviderTest {
    private static Turnstile one;
    private static Turnstile two;
    private static TurnstileLockProvider provider;
    private static TurnstileLockProvider otherInstance;

    @BeforeAll
    static void open() {
        String url = ProviderTestSupport.sqlite();
        one = ProviderTestSupport.open(url);
        two = Turnstile.builder(LockStores.open(url)).build();
        provider = new TurnstileLockProvider(one);
        otherInstance = new TurnstileLockProvider(two);
    }

    @AfterAll
    static void close() {
        for (Turnstile t : new Turnstile[] {one, two}) {
            t.close();
            t.store().close();
        }
    }

    private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(Instant.now(), name, atMost, atLeast);
    }

    private static String unique() {
        return "shed-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void aTaskRunByShedLocksExecutorSeesItsFenceAndShedLocksLockAssertPasses() throws Throwable {
        LockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
        String name = unique();
        LockingTaskExecutor.TaskResult<Long> result = executor.executeWithLock(() -> {
            LockAssert.assertLocked();
            Lease lease = TurnstileLockProvider.currentLease().orElseThrow();
            assertThat(lease.name()).isEqualTo(name);
            // Another instance is refused while the task runs.
            assertThat(otherInstance.lock(config(name, Duration.ofSeconds(5), Duration.ZERO))).isEmpty();
            return lease.fence();
        }, config(name, Duration.ofSeconds(5), Duration.ZERO));
        assertThat(result.wasExecuted()).isTrue();
        assertThat(result.getResult()).isPositive();
        assertThat(TurnstileLockProvider.currentLease()).as("released after the task").isEmpty();
        Optional<SimpleLock> next = otherInstance.lock(config(name, Duration.ofSeconds(5), Duration.ZERO));
        assertThat(next).isPresent();
        assertThat(((TurnstileSimpleLock) next.get()).fence()).as("fences rise across instances").isGreaterThan(result.getResult());
        next.get().unlock();
    }

    @Test
    void shedLocksLockExtenderKeepsTheSameLeaseAliveInTheStore() throws Throwable {
        LockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
        String name = unique();
        executor.executeWithLock((LockingTaskExecutor.Task) () -> {
            long fence = TurnstileLockProvider.currentLease().orElseThrow().fence();
            LockExtender.extendActiveLock(Duration.ofSeconds(5), Duration.ZERO);
            Thread.sleep(400); // past the original 200 ms
            assertThat(otherInstance.lock(config(name, Duration.ofSeconds(5), Duration.ZERO))).isEmpty();
            assertThat(TurnstileLockProvider.currentLease().orElseThrow().fence()).isEqualTo(fence);
        }, config(name, Duration.ofMillis(200), Duration.ZERO));
        assertThat(ProviderTestSupport.held(one, name)).isFalse();
    }

    @Test
    void nestedLocksOnOneThreadReportTheInnermostAndThenTheOuter() {
        SimpleLock outer = provider.lock(config(unique(), Duration.ofSeconds(5), Duration.ZERO)).orElseThrow();
        SimpleLock inner = provider.lock(config(unique(), Duration.ofSeconds(5), Duration.ZERO)).orElseThrow();
        assertThat(TurnstileLockProvider.currentLease().orElseThrow()).isSameAs(((TurnstileSimpleLock) inner).lease());
        inner.unlock();
        assertThat(TurnstileLockProvider.currentLease().orElseThrow()).isSameAs(((TurnstileSimpleLock) outer).lease());
        outer.unlock();
        assertThat(TurnstileLockProvider.currentLease()).isEmpty();
    }

    @Test
    void namesTurnstileCannotStoreAreRefusedWithAMessage() {
        assertThatThrownBy(() -> provider.lock(config(" padded", Duration.ofSeconds(5), Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("white space");
        assertThatThrownBy(() -> provider.lock(config("x".repeat(256), Duration.ofSeconds(5), Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("255");
        assertThatThrownBy(() -> provider.lock(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockConfiguration is null");
        assertThatThrownBy(() -> new TurnstileLockProvider((Turnstile) null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("turnstile is null");
    }

    @Test
    void aZeroLockAtMostForIsRefusedWithWhatToGiveAndTakesNothing() {
        String name = unique();
        assertThatThrownBy(() -> provider.lock(config(name, Duration.ZERO, Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lockAtMostFor of lock '" + name + "' is 0")
                .hasMessageContaining("lockAtMostFor = \"10m\"");
        assertThat(provider.turnstile().heldLocks()).extracting(dev.turnstile.LockInfo::name).doesNotContain(name);
        SimpleLock lock = provider.lock(config(name, Duration.ofSeconds(5), Duration.ZERO)).orElseThrow(); // nothing was taken
        lock.unlock();
    }

    @Test
    void aLockAtMostForUnderTurnstilesMinimumExpiresForShedLockAtTheRequestedTime() throws Exception {
        String name = unique();
        SimpleLock lock = provider.lock(config(name, Duration.ofMillis(3), Duration.ZERO)).orElseThrow();
        Thread.sleep(5);
        assertThat(lock.extend(Duration.ofSeconds(5), Duration.ZERO)).isEmpty();
        assertThat(ProviderTestSupport.held(one, name)).isFalse();
    }

    @Test
    void theProviderIsExtensible() {
        String name = unique();
        TurnstileLockProvider keptAlive = new TurnstileLockProvider(one) {
            @Override
            protected dev.turnstile.LockOptions lockOptions(LockConfiguration config) {
                return super.lockOptions(config).toBuilder().keepAlive(true).build();
            }
        };
        SimpleLock lock = keptAlive.lock(config(name, Duration.ofMillis(150), Duration.ZERO)).orElseThrow();
        try {
            Thread.sleep(400);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        assertThat(ProviderTestSupport.held(one, name)).as("renewed past its 150 ms TTL").isTrue();
        lock.unlock();
        assertThat(ProviderTestSupport.held(one, name)).isFalse();
    }
}
