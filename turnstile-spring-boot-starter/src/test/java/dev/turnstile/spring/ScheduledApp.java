package dev.turnstile.spring;

import dev.turnstile.job.JobContext;
import dev.turnstile.job.LockAssert;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.test.context.DynamicPropertyRegistry;

/** A small application with a locked {@code @Scheduled} job, over a SQLite DataSource. */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
@Import(ScheduledApp.Ticker.class)
class ScheduledApp {

    static void properties(DynamicPropertyRegistry registry) {
        String url = Boot.sqliteUrl();
        String name = Boot.unique("tick"); // once: the supplier is asked at every resolution
        registry.add("spring.datasource.url", () -> url);
        registry.add("turnstile.jdbc.create-table", () -> "true");
        // the test class path has Flyway and Liquibase (MigrationsTest); this application has no migrations
        registry.add("spring.liquibase.enabled", () -> "false");
        registry.add("spring.flyway.enabled", () -> "false");
        registry.add("ticker.name", () -> name);
    }

    static class Ticker {
        private final AtomicInteger ticks = new AtomicInteger();
        private volatile Thread lastThread;
        private volatile long lastFence;

        @Scheduled(fixedDelay = 40)
        @TurnstileLock(name = "${ticker.name}", lockAtMostFor = "10s")
        public void tick() {
            LockAssert.assertLocked();
            lastFence = JobContext.current().orElseThrow().fence();
            lastThread = Thread.currentThread();
            ticks.incrementAndGet();
        }

        public int ticks() {
            return ticks.get();
        }

        public Thread lastThread() {
            return lastThread;
        }

        public long lastFence() {
            return lastFence;
        }
    }
}
