package dev.turnstile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link Lease#release(Duration)}: a minimum hold chosen at release time (the ShedLock bridge's extend). */
class ReleaseWithAtLeastTest {

    @Test
    void theLockStaysTakenUntilTheGivenHoldAfterTheAcquire() throws Exception {
        try (Turnstile t = Turnstile.builder(new InMemoryLockStore()).build()) {
            Lease lease = t.tryAcquire("a", LockOptions.lockAtMostFor(Duration.ofSeconds(5))).orElseThrow();
            assertThat(lease.release(Duration.ofMillis(300))).isEqualTo(ReleaseOutcome.SHORTENED_TO_AT_LEAST);
            assertThat(lease.release(Duration.ZERO)).as("idempotent").isEqualTo(ReleaseOutcome.SHORTENED_TO_AT_LEAST);
            assertThat(t.tryAcquire("a")).isEmpty();
            Thread.sleep(350);
            assertThat(t.tryAcquire("a")).isPresent();
        }
    }

    @Test
    void zeroFreesAtOnceEvenWhenTheOptionsSetAMinimumHold() {
        try (Turnstile t = Turnstile.builder(new InMemoryLockStore()).build()) {
            Lease lease = t.tryAcquire("b", LockOptions.builder().lockAtMostFor(Duration.ofSeconds(5))
                    .lockAtLeastFor(Duration.ofSeconds(5)).build()).orElseThrow();
            assertThat(lease.release(Duration.ZERO)).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(t.tryAcquire("b")).isPresent();
            Lease re = t.tryAcquire("r", LockOptions.builder().reentrant().build()).orElseThrow();
            Lease inner = t.tryAcquire("r", LockOptions.builder().reentrant().build()).orElseThrow();
            assertThat(inner.release(Duration.ZERO)).isEqualTo(ReleaseOutcome.STILL_HELD);
            assertThat(re.release(Duration.ZERO)).isEqualTo(ReleaseOutcome.RELEASED);
        }
    }

    @Test
    void badHoldsAreRefusedAndChangeNothing() {
        try (Turnstile t = Turnstile.builder(new InMemoryLockStore()).build()) {
            Lease lease = t.tryAcquire("c").orElseThrow();
            assertThatThrownBy(() -> lease.release(null)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lockAtLeastFor is null");
            assertThatThrownBy(() -> lease.release(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("must not be negative");
            assertThat(lease.isHeld()).isTrue();
            lease.release();
        }
    }
}
