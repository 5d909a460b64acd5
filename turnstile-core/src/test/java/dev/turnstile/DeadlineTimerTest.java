package dev.turnstile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The deadline checks share one timer entry armed for the earliest: each check must still run on
 * time whatever order checks come and go in, and none that was cancelled may run.
 */
class DeadlineTimerTest {
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final DeadlineTimer deadlines = new DeadlineTimer(timer);

    @AfterEach
    void stop() {
        timer.shutdownNow();
    }

    private static long in(long millis) {
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    }

    @Test
    void anEarlierCheckAddedAfterALaterOneRunsOnTimeNotWithTheLaterOne() throws Exception {
        CompletableFuture<Long> late = new CompletableFuture<>();
        CompletableFuture<Long> early = new CompletableFuture<>();
        deadlines.schedule(in(5_000), () -> late.complete(System.nanoTime()));
        long due = in(100);
        deadlines.schedule(due, () -> early.complete(System.nanoTime()));

        long ran = early.get(2, TimeUnit.SECONDS);
        assertThat(ran - due).as("ran at or after its time").isGreaterThanOrEqualTo(0);
        assertThat(late).isNotDone();
    }

    @Test
    void aLaterCheckRunsAfterTheArmedEarlierOneWasCancelled() throws Exception {
        CompletableFuture<Long> second = new CompletableFuture<>();
        List<String> ran = new java.util.concurrent.CopyOnWriteArrayList<>();
        DeadlineTimer.Check first = deadlines.schedule(in(50), () -> ran.add("cancelled"));
        long due = in(150);
        deadlines.schedule(due, () -> second.complete(System.nanoTime()));
        first.cancel();

        assertThat(second.get(2, TimeUnit.SECONDS) - due).isGreaterThanOrEqualTo(0);
        assertThat(ran).as("a cancelled check ran").isEmpty();
    }

    @Test
    void checksRunInTheOrderOfTheirTimesAndOneThatThrowsDoesNotStopTheRest() throws Exception {
        ConcurrentLinkedQueue<Integer> order = new ConcurrentLinkedQueue<>();
        CountDownLatch done = new CountDownLatch(1);
        deadlines.schedule(in(120), () -> {
            order.add(3);
            done.countDown();
        });
        deadlines.schedule(in(40), () -> order.add(1));
        deadlines.schedule(in(80), () -> {
            order.add(2);
            throw new IllegalStateException("a failing check");
        });

        assertThat(done.await(2, TimeUnit.SECONDS)).isTrue();
        assertThat(order).containsExactly(1, 2, 3);
    }

    @Test
    void aCheckThatThrowsAnErrorDoesNotStrandTheOthers() throws Exception {
        CountDownLatch later = new CountDownLatch(1);
        deadlines.schedule(in(30), () -> {
            throw new OutOfMemoryError("unable to create native thread (a test)");
        });
        deadlines.schedule(in(80), later::countDown);
        assertThat(later.await(2, TimeUnit.SECONDS)).as("the check after the one that threw an Error ran").isTrue();
    }

    @Test
    void aCheckAlreadyDueRunsAtOnce() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        deadlines.schedule(in(60_000), () -> { });
        deadlines.schedule(System.nanoTime() - 1, ran::countDown);
        assertThat(ran.await(1, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aStoppedTimerRefusesNewChecks() {
        timer.shutdownNow();
        assertThatThrownBy(() -> deadlines.schedule(in(10), () -> { }))
                .isInstanceOf(RejectedExecutionException.class)
                .hasMessageContaining("closing");
    }

    /**
     * Through the client: a long lease taken first arms the timer far ahead; short leases taken
     * after it must each still be told of their loss at their own deadline, and a released one never.
     */
    @Test
    void shortLeasesTakenAfterALongOneAreToldOfTheirLossOnTimeAndReleasedOnesNever() throws Exception {
        InMemoryLockStore store = new InMemoryLockStore();
        try (Turnstile t = Turnstile.builder(store).build()) {
            ConcurrentLinkedQueue<String> lost = new ConcurrentLinkedQueue<>();
            Lease longOne = t.tryAcquire("long", LockOptions.builder().lockAtMostFor(Duration.ofMinutes(5))
                    .onLost(l -> lost.add("long")).build()).orElseThrow();
            CountDownLatch shortLost = new CountDownLatch(3);
            long taken = System.nanoTime();
            for (int i = 0; i < 3; i++) {
                String name = "short-" + i;
                t.tryAcquire(name, LockOptions.builder().lockAtMostFor(Duration.ofMillis(300 + 100L * i)).onLost(l -> {
                    lost.add(name);
                    shortLost.countDown();
                }).build()).orElseThrow();
            }
            Lease released = t.tryAcquire("released", LockOptions.builder().lockAtMostFor(Duration.ofMillis(200))
                    .onLost(l -> lost.add("released")).build()).orElseThrow();
            released.release();

            assertThat(shortLost.await(3, TimeUnit.SECONDS)).as("every short lease was told of its loss").isTrue();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - taken)).as("told near their TTLs, not the long one's")
                    .isLessThan(2_000);
            Thread.sleep(100);
            assertThat(lost).containsExactly("short-0", "short-1", "short-2");
            assertThat(longOne.isHeld()).isTrue();
        }
    }
}
