package dev.turnstile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The listener hooks that metrics and tracing build on, and the held-leases snapshot. */
class TurnstileListenerTest {

    /** Records every call as one line. */
    static final class Recorder implements TurnstileListener {
        final List<String> calls = new CopyOnWriteArrayList<>();
        final List<Duration> latencies = new CopyOnWriteArrayList<>();

        @Override
        public void onAcquire(String name, AcquireOutcome outcome, Duration latency) {
            calls.add("acquire " + name + " " + outcome);
            latencies.add(latency);
        }

        @Override
        public void onRelease(String name, long fence, Duration heldFor) {
            calls.add("release " + name + " " + fence);
        }

        @Override
        public void onLost(LeaseLoss loss) {
            calls.add("lost " + loss.name() + " " + loss.fence());
        }

        @Override
        public void onStoreFailure(String name, RuntimeException error) {
            calls.add("failure " + name + " " + error.getClass().getSimpleName());
        }
    }

    @Test
    void acquiresReleasesAndBusyAreReportedOncePerCall() throws Exception {
        Recorder r = new Recorder();
        try (Turnstile t = Turnstile.builder(new InMemoryLockStore()).listener(r).build();
                Turnstile other = Turnstile.builder(t.store()).build()) {
            Lease lease = t.tryAcquire("a", LockOptions.lockAtMostFor(Duration.ofSeconds(5))).orElseThrow();
            assertThat(other.tryAcquire("a")).isEmpty();
            assertThat(t.tryAcquire("a")).isEmpty();
            assertThat(t.acquire("a", LockOptions.defaults(), Duration.ofMillis(120))).isEmpty();
            lease.release();
            lease.release(); // idempotent: reported once
            assertThat(r.calls).containsExactly("acquire a ACQUIRED", "acquire a BUSY", "acquire a BUSY",
                    "release a " + lease.fence());
            assertThat(r.latencies.get(2)).as("a waiting acquire reports the whole wait").isGreaterThanOrEqualTo(Duration.ofMillis(100));
        }
    }

    @Test
    void storeFailuresOnAcquireAndReleaseAreReported() {
        Recorder r = new Recorder();
        TurnstileTest.FlakyStore store = new TurnstileTest.FlakyStore();
        try (Turnstile t = Turnstile.builder(store).listener(r).build()) {
            Lease lease = t.tryAcquire("f").orElseThrow();
            store.down.set(true);
            assertThatThrownBy(() -> t.tryAcquire("g")).isInstanceOf(StoreUnavailableException.class);
            assertThatThrownBy(lease::release).isInstanceOf(StoreUnavailableException.class);
            assertThatThrownBy(() -> t.tryAcquire(" bad")).isInstanceOf(IllegalArgumentException.class);
            assertThat(r.calls).containsExactly("acquire f ACQUIRED", "acquire g STORE_FAILURE",
                    "failure g StoreUnavailableException", "failure f StoreUnavailableException");
            store.down.set(false);
        }
    }

    @Test
    void lossAndFailedRenewalsAreReported() throws Exception {
        Recorder r = new Recorder();
        TurnstileTest.FlakyStore store = new TurnstileTest.FlakyStore();
        try (Turnstile t = Turnstile.builder(store).listener(r).build()) {
            Lease lease = t.tryAcquire("k", LockOptions.builder().lockAtMostFor(Duration.ofMillis(300)).keepAlive(true).build())
                    .orElseThrow();
            store.down.set(true);
            lease.lost().toCompletableFuture().get(5, java.util.concurrent.TimeUnit.SECONDS);
            // Listeners are told right after lost() completes and the onLost callback ran.
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> r.calls.contains("lost k " + lease.fence()));
            assertThat(r.calls).contains("failure k StoreUnavailableException");
            store.down.set(false);
            lease.release(); // a lost lease's release is not reported as a release
            assertThat(r.calls).noneMatch(c -> c.startsWith("release"));
        }
    }

    @Test
    void aThrowingListenerNeverBreaksLocking() {
        Recorder after = new Recorder();
        TurnstileListener broken = new TurnstileListener() {
            @Override
            public void onAcquire(String name, AcquireOutcome outcome, Duration latency) {
                throw new IllegalStateException("metrics are broken");
            }

            @Override
            public void onRelease(String name, long fence, Duration heldFor) {
                throw new IllegalStateException("metrics are broken");
            }
        };
        try (Turnstile t = Turnstile.builder(new InMemoryLockStore()).listener(broken).listener(after).build()) {
            Lease lease = t.tryAcquire("x").orElseThrow();
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(after.calls).containsExactly("acquire x ACQUIRED", "release x " + lease.fence());
        }
    }

    @Test
    void heldLeasesIsAnImmutableSnapshotOfThisClientsLeases() {
        try (Turnstile t = Turnstile.builder(new InMemoryLockStore()).build();
                Turnstile other = Turnstile.builder(t.store()).build()) {
            assertThat(t.heldLeases()).isEmpty();
            Lease b = t.tryAcquire("b").orElseThrow();
            Lease a = t.tryAcquire("a").orElseThrow();
            other.tryAcquire("c").orElseThrow();
            List<Lease> snapshot = t.heldLeases();
            assertThat(snapshot).extracting(Lease::name).containsExactly("a", "b");
            assertThatThrownBy(() -> snapshot.add(a)).isInstanceOf(UnsupportedOperationException.class);
            b.release();
            assertThat(t.heldLeases()).extracting(Lease::name).containsExactly("a");
            assertThat(snapshot).hasSize(2);
            Lease re = t.tryAcquire("r", LockOptions.builder().reentrant().build()).orElseThrow();
            t.tryAcquire("r", LockOptions.builder().reentrant().build()).orElseThrow();
            assertThat(t.heldLeases()).extracting(Lease::name).containsExactly("a", "r");
            re.release();
        }
    }

    @Test
    void aNullListenerIsRefusedWithAMessage() {
        assertThatThrownBy(() -> Turnstile.builder(new InMemoryLockStore()).listener(null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("listener is null");
    }
}
