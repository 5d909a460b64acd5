package dev.turnstile.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LockingSchedulerTest {
    private final Turnstile turnstile = Turnstile.builder(new InMemoryLockStore()).build();
    private final ScheduledExecutorService executor = Executors.newScheduledThreadPool(2);
    private final LockingScheduler scheduler = LockingScheduler.wrap(executor, JobRunner.builder(turnstile).build());

    @AfterEach
    void close() {
        executor.shutdownNow();
        turnstile.close();
    }

    @Test
    void nextTicksGivesEachJobsSoonestTickAndForgetsCancelledAndEndedSchedules() throws Exception {
        java.time.Instant before = java.time.Instant.now();
        ScheduledFuture<?> hourly = scheduler.scheduleAtFixedRate("a", JobOptions.defaults(), () -> { }, 60, 60, TimeUnit.MINUTES);
        scheduler.scheduleWithFixedDelay("a", JobOptions.defaults(), () -> { }, 10, 10, TimeUnit.MINUTES);
        ScheduledFuture<JobResult<Void>> once = scheduler.schedule("b", JobOptions.defaults(), () -> { }, 1, TimeUnit.MILLISECONDS);
        var ticks = scheduler.nextTicks();
        assertThat(ticks.get("a")).as("the soonest of the two").isBetween(before.plus(Duration.ofMinutes(9)),
                java.time.Instant.now().plus(Duration.ofMinutes(10)));
        once.get(5, TimeUnit.SECONDS);
        hourly.cancel(false);
        assertThat(scheduler.nextTicks()).containsOnlyKeys("a");
        // many one-off runs that ended are forgotten as more are scheduled, without a read
        for (int i = 0; i < 1000; i++) {
            scheduler.schedule("burst", JobOptions.defaults(), () -> { }, 0, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS);
        }
        assertThat(scheduler.remembered()).as("the live schedule, and at most one batch of ended ones").isLessThanOrEqualTo(1 + 64);
        assertThat(scheduler.nextTicks()).containsOnlyKeys("a");
    }

    @Test
    void aThrowingJobDoesNotEndItsSchedule() {
        AtomicInteger calls = new AtomicInteger();
        ScheduledFuture<?> f = scheduler.scheduleAtFixedRate("flaky", JobOptions.defaults(), () -> {
            calls.incrementAndGet();
            throw new IllegalStateException("every tick fails");
        }, 0, 20, TimeUnit.MILLISECONDS);
        await().atMost(Duration.ofSeconds(5)).until(() -> calls.get() >= 3);
        assertThat(f.isDone()).isFalse();
        f.cancel(false);

        AtomicInteger delayed = new AtomicInteger();
        ScheduledFuture<?> g = scheduler.scheduleWithFixedDelay("flaky2", JobOptions.defaults(), () -> {
            delayed.incrementAndGet();
            throw new IllegalStateException("fails");
        }, 0, 20, TimeUnit.MILLISECONDS);
        await().atMost(Duration.ofSeconds(5)).until(() -> delayed.get() >= 3);
        g.cancel(false);
    }

    @Test
    void ticksAreSkippedWhileTheLockIsHeldElsewhereAndResumeAfter() throws Exception {
        Lease other = turnstile.tryAcquire("held", LockOptions.lockAtMostFor(Duration.ofSeconds(10))).orElseThrow();
        AtomicInteger calls = new AtomicInteger();
        ScheduledFuture<?> f = scheduler.scheduleAtFixedRate("held", JobOptions.defaults(), calls::incrementAndGet,
                0, 20, TimeUnit.MILLISECONDS);
        Thread.sleep(150);
        assertThat(calls).hasValue(0);
        other.release();
        await().atMost(Duration.ofSeconds(5)).until(() -> calls.get() >= 2);
        f.cancel(false);
    }

    @Test
    void aOneShotRunReportsItsResult() throws Exception {
        JobResult<Void> result = scheduler.schedule("once", JobOptions.defaults(), LockAssert::assertLocked, 10,
                TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS);
        assertThat(result.ran()).isTrue();
    }

    @Test
    void badInputIsRefusedAtScheduleTime() {
        assertThatThrownBy(() -> LockingScheduler.wrap(null, JobRunner.builder(turnstile).build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("executor is null");
        assertThatThrownBy(() -> LockingScheduler.wrap(executor, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("runner is null");
        assertThatThrownBy(() -> scheduler.scheduleAtFixedRate("", JobOptions.defaults(), () -> {}, 0, 1, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock name is empty");
        assertThatThrownBy(() -> scheduler.scheduleAtFixedRate("p", JobOptions.defaults(), () -> {}, 0, 0, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("period of job 'p' is 0 SECONDS: it must be positive");
        assertThatThrownBy(() -> scheduler.scheduleWithFixedDelay("p", JobOptions.defaults(), () -> {}, 0, -1, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be positive");
        assertThatThrownBy(() -> scheduler.schedule("p", null, () -> {}, 0, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("options of job 'p' are null");
        assertThatThrownBy(() -> scheduler.schedule("p", JobOptions.defaults(), null, 0, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("task of job 'p' is null");
        assertThatThrownBy(() -> scheduler.schedule("p", JobOptions.defaults(), () -> {}, 0, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("time unit");
    }
}
