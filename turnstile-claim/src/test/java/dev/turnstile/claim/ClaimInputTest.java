package dev.turnstile.claim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Hostile input to the claiming builders (issue 23, item 15): refused with a message, never an arithmetic error. */
class ClaimInputTest {
    /** The builders never call the store: a proxy that fails on any call proves it. */
    private static final ClaimStore STORE = (ClaimStore) Proxy.newProxyInstance(ClaimStore.class.getClassLoader(),
            new Class<?>[] {ClaimStore.class}, (p, m, a) -> {
                throw new AssertionError("the builder called the store: " + m);
            });

    @Test
    void durationsTooLargeForMillisecondsAreRefusedWithTheRange() {
        for (Duration huge : new Duration[] {Duration.ofSeconds(Long.MAX_VALUE), Duration.ofSeconds(Long.MAX_VALUE, 999_999_999),
                Duration.ofDays(367)}) {
            assertThatThrownBy(() -> TaskClaimer.builder(STORE).lockTimeout(huge))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lock timeout").hasMessageContaining("1ms to 366 days");
            assertThatThrownBy(() -> TaskClaimer.builder(STORE).relockFloor(huge))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("relock floor");
            assertThatThrownBy(() -> TaskClaimer.builder(STORE).keepAlive(huge))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keep-alive");
        }
        assertThat(TaskClaimer.builder(STORE).lockTimeout(Duration.ofDays(366))).isNotNull();
    }

    @Test
    void aFilterColumnSpelledInAnotherCaseIsRefused() {
        assertThatThrownBy(() -> ClaimTable.builder("tasks").filterColumns("PHASE").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'PHASE' is column 'phase' spelled in another case");
        assertThatThrownBy(() -> ClaimTable.builder("tasks").filterColumns("tenant", "Tenant").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'Tenant' is column 'tenant'");
        // the same spelling twice is one column, as before
        assertThat(ClaimTable.builder("tasks").filterColumns("phase", "tenant", "tenant").build().filterColumns())
                .containsExactly("phase", "tenant");
    }
}
