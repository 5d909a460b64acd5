package dev.turnstile.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@code @Scheduled} + {@code @TurnstileLock} in a Spring Boot application on its DataSource. */
@SpringBootTest(classes = ScheduledApp.class)
class ScheduledTest {

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        ScheduledApp.properties(registry);
    }

    @Autowired
    ScheduledApp.Ticker ticker;

    @Autowired
    Turnstile turnstile;

    @Autowired
    LockStore store;

    @Value("${ticker.name}")
    String name;

    @Test
    void scheduledRunsAreLockedAndSkippedWhileAnotherInstanceHoldsTheLock() throws Exception {
        assertThat(store.description()).as("the application's DataSource").contains("turnstile_locks");
        await().atMost(Duration.ofSeconds(10)).until(() -> ticker.ticks() >= 3);
        assertThat(ticker.lastFence()).isPositive();

        Turnstile otherInstance = Turnstile.builder(store).owner("other-instance").build();
        Lease held = await().atMost(Duration.ofSeconds(5)).until(
                () -> otherInstance.tryAcquire(name, LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElse(null),
                java.util.Objects::nonNull);
        Thread.sleep(100); // a tick that had the lock before us finishes
        int before = ticker.ticks();
        Thread.sleep(400); // about ten ticks, all skipped
        assertThat(ticker.ticks()).isEqualTo(before);

        long fence = held.fence();
        held.release();
        otherInstance.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> ticker.ticks() > before);
        assertThat(ticker.lastFence()).isGreaterThan(fence);
    }
}
