package dev.turnstile.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The locked {@code @Scheduled} job on virtual threads ({@code spring.threads.virtual.enabled}).
 * Needs Java 21 or later: the build runs this class in a JVM of its own on the second JDK
 * (profile {@code virtual-threads}), and leaves it out of the Java 17 run.
 */
@SpringBootTest(classes = ScheduledApp.class, properties = "spring.threads.virtual.enabled=true")
class VirtualThreadsTest {

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        ScheduledApp.properties(registry);
    }

    @Autowired
    ScheduledApp.Ticker ticker;

    @Test
    void lockedScheduledJobRunsOnVirtualThreads() throws Exception {
        if (Boolean.getBoolean("turnstile.virtualThreads.required")) { // set by the virtual-threads execution
            assertThat(Runtime.version().feature()).as("this test must run on Java 21+").isGreaterThanOrEqualTo(21);
        }
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need Java 21+ (run by the virtual-threads profile)");
        await().atMost(Duration.ofSeconds(10)).until(() -> ticker.ticks() >= 3);
        Thread thread = ticker.lastThread();
        assertThat((Boolean) Thread.class.getMethod("isVirtual").invoke(thread)).as("ran on %s", thread).isTrue();
        assertThat(ticker.lastFence()).isPositive();
    }
}
