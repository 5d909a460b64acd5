package dev.turnstile.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.turnstile.Turnstile;
import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Leadership's own rules; election across store clients is the testkit's SchedulingContract. */
class LeadershipTest {
    private final InMemoryLockStore store = new InMemoryLockStore();
    private final Turnstile a = Turnstile.builder(store).pollInterval(Duration.ofMillis(2), Duration.ofMillis(20)).build();
    private final Turnstile b = Turnstile.builder(store).pollInterval(Duration.ofMillis(2), Duration.ofMillis(20)).build();

    @AfterEach
    void close() {
        a.close();
        b.close();
    }

    @Test
    void anOnGrantedThatThrowsHandsTheRoleBackToAStandby() {
        List<String> events = new CopyOnWriteArrayList<>();
        AtomicInteger attempts = new AtomicInteger();
        try (Leadership broken = Leadership.builder(a, "r").lockAtMostFor(Duration.ofSeconds(5)).retryDelay(Duration.ofSeconds(2))
                .onGranted(t -> {
                    attempts.incrementAndGet();
                    throw new IllegalStateException("cannot start the leader's work");
                })
                .onRevoked(t -> events.add("broken revoked " + t.fence()))
                .build()) {
            broken.start();
            await().atMost(Duration.ofSeconds(5)).until(() -> attempts.get() == 1);
            try (Leadership healthy = Leadership.builder(b, "r").lockAtMostFor(Duration.ofSeconds(5))
                    .onGranted(t -> events.add("healthy granted " + t.fence())).build()) {
                healthy.start();
                await().atMost(Duration.ofSeconds(2)).until(healthy::isLeader);
                assertThat(broken.isLeader()).isFalse();
                assertThat(events.get(0)).startsWith("broken revoked");
            }
        }
    }

    /** Issue 23 item 14: a lock table that is missing is not an outage to retry every retryDelay forever. */
    @Test
    void aStoreThatIsNotSetUpStopsTheStandingInsteadOfRetrying() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        dev.turnstile.spi.LockStore notSetUp = new dev.turnstile.spi.LockStore() {
            @Override public java.util.Optional<dev.turnstile.spi.Grant> tryAcquire(dev.turnstile.spi.AcquireRequest r) {
                calls.incrementAndGet();
                throw new dev.turnstile.StoreSchemaException("the lock table 'x' does not exist", null);
            }
            @Override public boolean extend(String n, String t, Duration ttl) { return false; }
            @Override public boolean release(String n, String t, Duration atLeast) { return false; }
            @Override public List<dev.turnstile.LockInfo> heldLocks() { return List.of(); }
            @Override public boolean forceRelease(String n) { return false; }
            @Override public String description() { return "not set up"; }
        };
        try (Turnstile t = Turnstile.builder(notSetUp).build();
                Leadership l = Leadership.builder(t, "r").retryDelay(Duration.ofMillis(10)).build()) {
            l.start();
            await().atMost(Duration.ofSeconds(5)).until(() -> calls.get() >= 1);
            Thread.sleep(300);
            assertThat(calls.get()).as("no retry every 10 ms").isEqualTo(1);
            assertThat(l.isLeader()).isFalse();
        }
    }

    @Test
    void closeBeforeStartAndTwiceIsHarmlessAndStartTwiceIsRefused() {
        Leadership l = Leadership.builder(a, "idle").build();
        l.close();
        l.close();
        assertThatThrownBy(l::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        Leadership m = Leadership.builder(a, "twice").build();
        m.start();
        assertThatThrownBy(m::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("already started");
        await().atMost(Duration.ofSeconds(2)).until(m::isLeader);
        assertThat(m.currentTerm().orElseThrow().role()).isEqualTo("twice");
        m.close();
        assertThat(a.heldLeases()).as("the role was handed back").isEmpty();
    }

    @Test
    void badInputIsRefusedWithMessagesThatSayWhatToFix() {
        assertThatThrownBy(() -> Leadership.builder(null, "r")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("turnstile is null");
        assertThatThrownBy(() -> Leadership.builder(a, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lock name is null");
        assertThatThrownBy(() -> Leadership.builder(a, " ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("white space");
        assertThatThrownBy(() -> Leadership.builder(a, "r").lockAtMostFor(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockAtMostFor is 0s: it must be positive");
        assertThatThrownBy(() -> Leadership.builder(a, "r").lockAtMostFor(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1s");
        assertThatThrownBy(() -> Leadership.builder(a, "r").retryDelay(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1 ms to 1 h");
        assertThatThrownBy(() -> Leadership.builder(a, "r").onGranted(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("onGranted is null");
        assertThatThrownBy(() -> Leadership.builder(a, "r").onRevoked(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("onRevoked is null");
    }
}
