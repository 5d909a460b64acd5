package dev.turnstile.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The meters against a real SQLite store file: two clients, so one finds the other's lock busy. */
class TurnstileMetersTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<AutoCloseable> closing = new ArrayList<>();
    private final String url = Stores.sqliteUrl();

    private Turnstile client(TurnstileMeters meters) {
        Turnstile t = Turnstile.builder(Stores.sqlite(url)).listener(meters).build();
        closing.add(0, t.store());
        closing.add(0, t);
        return t;
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
    }

    private Timer acquireTimer(String lock, String outcome) {
        return registry.find(TurnstileMeters.ACQUIRE).tags(TurnstileMeters.LOCK_TAG, lock, TurnstileMeters.OUTCOME_TAG, outcome).timer();
    }

    @Test
    void acquiredAndBusyAcquiresAreTimedByLockAndOutcome() {
        TurnstileMeters meters = TurnstileMeters.builder().build();
        meters.bindTo(registry);
        Turnstile a = client(meters);
        Turnstile b = client(meters);

        Lease lease = a.tryAcquire("report").orElseThrow();
        assertThat(b.tryAcquire("report")).isEmpty();
        assertThat(b.tryAcquire("report")).isEmpty();

        assertThat(acquireTimer("report", "acquired").count()).isEqualTo(1);
        assertThat(acquireTimer("report", "busy").count()).isEqualTo(2);
        assertThat(acquireTimer("report", "acquired").totalTime(java.util.concurrent.TimeUnit.NANOSECONDS)).isPositive();
        assertThat(acquireTimer("report", "store_failure")).isNull();
        lease.release();
        assertThat(registry.find(TurnstileMeters.LEASE_DURATION).tag(TurnstileMeters.LOCK_TAG, "report").timer().count()).isEqualTo(1);
    }

    @Test
    void anUnreachableStoreCountsAFailedAcquireAndAStoreFailure() {
        TurnstileMeters meters = TurnstileMeters.builder().build();
        meters.bindTo(registry);
        Turnstile down = Turnstile.builder(Stores.unreachable()).listener(meters).build();
        closing.add(down);

        assertThatThrownBy(() -> down.tryAcquire("report")).isInstanceOf(StoreUnavailableException.class);

        assertThat(acquireTimer("report", "store_failure").count()).isEqualTo(1);
        assertThat(registry.find(TurnstileMeters.STORE_FAILURES).tag(TurnstileMeters.LOCK_TAG, "report").counter().count()).isEqualTo(1);
    }

    @Test
    void theGaugeCountsTheLeasesTheMonitoredClientsHold() {
        TurnstileMeters meters = TurnstileMeters.builder().build();
        Turnstile a = client(meters);
        Turnstile b = client(meters);
        meters.monitor(a).monitor(b).monitor(a).bindTo(registry);

        Lease one = a.tryAcquire("one").orElseThrow();
        Lease two = b.tryAcquire("two").orElseThrow();
        assertThat(registry.get(TurnstileMeters.LEASES_HELD).gauge().value()).isEqualTo(2.0);
        one.release();
        assertThat(registry.get(TurnstileMeters.LEASES_HELD).gauge().value()).isEqualTo(1.0);
        two.release();
        assertThat(registry.get(TurnstileMeters.LEASES_HELD).gauge().value()).isZero();
    }

    @Test
    void aLostLeaseIsCounted() {
        TurnstileMeters meters = TurnstileMeters.builder().build();
        meters.bindTo(registry);
        Turnstile a = client(meters);
        Turnstile admin = client(meters);

        Optional<Lease> lease = a.tryAcquire("short", LockOptions.builder()
                .lockAtMostFor(Duration.ofMillis(600)).keepAlive(true).build());
        assertThat(lease).isPresent();
        assertThat(admin.forceRelease("short")).isTrue(); // the next renewal is refused

        await().atMost(Duration.ofSeconds(5)).until(() -> lease.get().lost().toCompletableFuture().isDone());
        assertThat(registry.get(TurnstileMeters.LEASES_LOST).tag(TurnstileMeters.LOCK_TAG, "short").counter().count()).isEqualTo(1);
    }

    @Test
    void withoutTheLockNameTagMetersCarryNone() {
        TurnstileMeters meters = TurnstileMeters.builder().lockNameTag(false).build();
        meters.bindTo(registry);
        Turnstile a = client(meters);
        a.tryAcquire("invoice-1").orElseThrow().release();
        a.tryAcquire("invoice-2").orElseThrow().release();

        List<Meter> acquires = List.copyOf(registry.find(TurnstileMeters.ACQUIRE).meters());
        assertThat(acquires).hasSize(1);
        assertThat(acquires.get(0).getId().getTag(TurnstileMeters.LOCK_TAG)).isNull();
        assertThat(((Timer) acquires.get(0)).count()).isEqualTo(2);
    }

    @Test
    void aMapperGroupsDynamicNames() {
        TurnstileMeters meters = TurnstileMeters.builder()
                .lockNameTag(name -> name.replaceAll("-\\d+$", ""))
                .tags(Tags.of("store", "sqlite"))
                .build();
        meters.bindTo(registry);
        Turnstile a = client(meters);
        a.tryAcquire("invoice-1").orElseThrow().release();
        a.tryAcquire("invoice-2").orElseThrow().release();

        Timer timer = registry.get(TurnstileMeters.ACQUIRE).tags(TurnstileMeters.LOCK_TAG, "invoice", "store", "sqlite").timer();
        assertThat(timer.count()).isEqualTo(2);
        assertThat(registry.get(TurnstileMeters.LEASES_HELD).tag("store", "sqlite").gauge()).isNotNull();
    }

    @Test
    void eventsBeforeBindingAreNotCountedAndBindingTwiceCountsOnce() {
        TurnstileMeters meters = TurnstileMeters.builder().build();
        Turnstile a = client(meters);
        a.tryAcquire("early").orElseThrow().release();
        meters.bindTo(registry);
        meters.bindTo(registry);
        a.tryAcquire("early").orElseThrow().release();

        assertThat(acquireTimer("early", "acquired").count()).isEqualTo(1);
    }

    @Test
    void badInputSaysWhatToGive() {
        assertThatThrownBy(() -> TurnstileMeters.builder().tags(List.of(Tag.of("lock", "x"))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tag key 'lock' is Turnstile's own");
        assertThatThrownBy(() -> TurnstileMeters.builder().tags(null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Tags.empty()");
        assertThatThrownBy(() -> TurnstileMeters.builder().lockNameTag((java.util.function.UnaryOperator<String>) null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lockNameTag(false)");
        assertThatThrownBy(() -> TurnstileMeters.builder().build().monitor(null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("give the Turnstile");
        assertThatThrownBy(() -> TurnstileMeters.builder().build().bindTo(null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("give the MeterRegistry");
    }
}
