package dev.turnstile.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.LockInfo;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LockStore;
import dev.turnstile.testing.InMemoryLockStore;
import java.io.IOException;
import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Runner behaviour that needs no real store; the store-backed part is the testkit's SchedulingContract. */
class JobRunnerTest {
    private final Turnstile turnstile = Turnstile.builder(new InMemoryLockStore()).build();
    private final JobRunner runner = JobRunner.builder(turnstile).build();

    @AfterEach
    void close() {
        turnstile.close();
    }

    /** Every call fails as an unreachable store's would. */
    static class DownStore implements LockStore {
        private static StoreUnavailableException down() {
            return new StoreUnavailableException("store is down", null);
        }

        @Override public Optional<Grant> tryAcquire(AcquireRequest r) { throw down(); }
        @Override public boolean extend(String n, String t, Duration ttl) { throw down(); }
        @Override public boolean release(String n, String t, Duration atLeast) { throw down(); }
        @Override public List<LockInfo> heldLocks() { throw down(); }
        @Override public boolean forceRelease(String n) { throw down(); }
        @Override public String description() { return "down"; }
    }

    @Test
    void theJobRunsWithItsContextAndTheLockIsReleasedAfter() throws Exception {
        JobResult<String> result = runner.call("ctx", JobOptions.defaults(), () -> {
            JobContext ctx = JobContext.current().orElseThrow();
            assertThat(ctx.lease().isHeld()).isTrue();
            assertThat(turnstile.heldLeases()).extracting(l -> l.name()).containsExactly("ctx");
            return ctx.name() + "@" + ctx.fence();
        });
        assertThat(result.ran()).isTrue();
        assertThat(result.value()).isEqualTo("ctx@" + result.fence().getAsLong());
        assertThat(JobContext.current()).isEmpty();
        assertThat(turnstile.heldLeases()).isEmpty();
    }

    @Test
    void aFailingJobReleasesItsLockAndItsExceptionReachesTheCaller() {
        assertThatThrownBy(() -> runner.run("boom", () -> {
            throw new IllegalStateException("job failed");
        })).isInstanceOf(IllegalStateException.class).hasMessage("job failed");
        assertThatThrownBy(() -> runner.call("boom", () -> {
            throw new IOException("checked");
        })).isInstanceOf(IOException.class);
        assertThat(turnstile.heldLeases()).isEmpty();
        assertThat(JobContext.current()).isEmpty();
        assertThat(runner.run("boom", () -> {}).ran()).isTrue();
    }

    @Test
    void interceptorsWrapTheRunOnItsThreadWhileTheLeaseIsHeldFirstOutermost() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        Thread caller = Thread.currentThread();
        JobInterceptor outer = new JobInterceptor() {
            @Override
            public <T> T around(JobContext ctx, Callable<T> run) throws Exception {
                seen.add("outer in " + ctx.name() + " held=" + ctx.lease().isHeld() + " sameThread=" + (Thread.currentThread() == caller));
                try {
                    return run.call();
                } finally {
                    seen.add("outer out");
                }
            }
        };
        JobInterceptor inner = new JobInterceptor() {
            @Override
            public <T> T around(JobContext ctx, Callable<T> run) throws Exception {
                seen.add("inner in");
                return run.call();
            }
        };
        JobRunner r = JobRunner.builder(turnstile).interceptor(outer).interceptor(inner).build();
        assertThat(r.call("icpt", () -> {
            seen.add("job");
            return 42;
        }).value()).isEqualTo(42);
        assertThat(seen).containsExactly("outer in icpt held=true sameThread=true", "inner in", "job", "outer out");
    }

    @Test
    void aCheckedExceptionFromAnInterceptorIsWrappedForRunnables() {
        JobInterceptor failing = new JobInterceptor() {
            @Override
            public <T> T around(JobContext ctx, Callable<T> run) throws Exception {
                throw new IOException("tracing backend down");
            }
        };
        JobRunner r = JobRunner.builder(turnstile).interceptor(failing).build();
        assertThatThrownBy(() -> r.run("wrap", () -> {})).isInstanceOf(UndeclaredThrowableException.class)
                .hasCauseInstanceOf(IOException.class).hasMessageContaining("interceptor of job 'wrap'");
        assertThat(turnstile.heldLeases()).isEmpty();
    }

    @Test
    void nestedRunsSeeTheInnermostContextAndRestoreTheOuterOne() throws Exception {
        runner.run("outer", () -> {
            LockAssert.assertLocked("outer");
            JobResult<Void> inner = runner.run("inner", () -> {
                assertThat(JobContext.current().orElseThrow().name()).isEqualTo("inner");
                LockAssert.assertLocked("inner");
                LockAssert.assertLocked("outer"); // still under the outer lock too
            });
            assertThat(inner.ran()).isTrue();
            assertThat(JobContext.current().orElseThrow().name()).isEqualTo("outer");
            assertThatThrownBy(() -> LockAssert.assertLocked("inner")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("runs under 'outer' only");
            // The same name nested is busy: a job never runs twice at once, even on one thread.
            assertThat(runner.run("outer", () -> {}).status()).isEqualTo(JobResult.Status.SKIPPED_BUSY);
        });
        assertThat(JobContext.current()).isEmpty();
    }

    @Test
    void lockAssertOutsideAnyRunSaysWhatToDo() {
        assertThatThrownBy(LockAssert::assertLocked).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("must run under a lock").hasMessageContaining("JobRunner");
        assertThatThrownBy(() -> LockAssert.assertLocked("report")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("lock 'report'").hasMessageContaining("holds no lock");
        assertThatThrownBy(() -> LockAssert.assertLocked(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("null");
        runner.run("any", LockAssert::assertLocked);
    }

    @Test
    void lockAssertHoldsOnlyOnTheJobsThread() throws Exception {
        runner.run("mine", () -> {
            Thread other = new Thread(() -> assertThatThrownBy(LockAssert::assertLocked).isInstanceOf(IllegalStateException.class));
            other.start();
            try {
                other.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
    }

    @Test
    void theLossInterruptDoesNotLeakPastTheRun() {
        JobResult<Void> result = runner.run("leak", JobOptions.builder().lockAtMostFor(Duration.ofMillis(100)).build(), () -> {
            try {
                Thread.sleep(5_000);
            } catch (InterruptedException expected) {
                Thread.currentThread().interrupt(); // a job that restores the flag, as it should
            }
        });
        assertThat(result.leaseLost()).isTrue();
        assertThat(Thread.currentThread().isInterrupted()).as("the runner's own interrupt is cleared").isFalse();
    }

    @Test
    void anUnreachableStoreSkipsOrFailsAsThePolicySays() {
        try (Turnstile down = Turnstile.builder(new DownStore()).build()) {
            JobRunner r = JobRunner.builder(down).build();
            JobResult<Void> skipped = r.run("d", () -> {
                throw new AssertionError("must not run");
            });
            assertThat(skipped.status()).isEqualTo(JobResult.Status.SKIPPED_STORE_UNAVAILABLE);
            assertThat(skipped.toString()).contains("store is down");
            JobRunner failing = JobRunner.builder(down)
                    .defaults(JobOptions.builder().onStoreUnavailable(StoreFailurePolicy.FAIL).build()).build();
            assertThatThrownBy(() -> failing.run("d", () -> {})).isInstanceOf(StoreUnavailableException.class);
        }
    }

    /** Issue 23 item 14: a lock table that is missing is not an outage to skip forever, whatever the policy. */
    @Test
    void aStoreThatIsNotSetUpFailsTheRunInsteadOfSkippingIt() {
        LockStore notSetUp = new DownStore() {
            @Override public Optional<Grant> tryAcquire(AcquireRequest r) {
                throw new dev.turnstile.StoreSchemaException("the lock table 'x' does not exist", null);
            }
        };
        try (Turnstile t = Turnstile.builder(notSetUp).build()) {
            JobRunner r = JobRunner.builder(t).build();
            assertThatThrownBy(() -> r.run("d", () -> {
                throw new AssertionError("must not run");
            })).isInstanceOf(dev.turnstile.StoreSchemaException.class).hasMessageContaining("does not exist")
                    .isNotInstanceOf(StoreUnavailableException.class);
        }
    }

    @Test
    void badInputIsRefusedWithMessagesThatSayWhatToFix() {
        assertThatThrownBy(() -> runner.run(null, () -> {})).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lock name is null");
        assertThatThrownBy(() -> runner.run("", () -> {})).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty");
        assertThatThrownBy(() -> runner.run("  ", () -> {})).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("white space");
        assertThatThrownBy(() -> runner.run("x", null, () -> {})).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("options is null");
        assertThatThrownBy(() -> runner.run("x", (Runnable) null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("task is null");
        assertThatThrownBy(() -> JobRunner.builder(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("turnstile is null");
        assertThatThrownBy(() -> JobRunner.builder(turnstile).interceptor(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> JobRunner.builder(turnstile).defaults(null)).isInstanceOf(IllegalArgumentException.class);

        assertThatThrownBy(() -> JobOptions.builder().lockAtMostFor(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockAtMostFor is 0s: it must be positive");
        assertThatThrownBy(() -> JobOptions.builder().lockAtMostFor(Duration.ofSeconds(-5))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockAtMostFor is -5s");
        assertThatThrownBy(() -> JobOptions.builder().lockAtMostFor(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockAtMostFor is null");
        assertThatThrownBy(() -> JobOptions.builder().lockAtLeastFor(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockAtLeastFor is -1ms: it must not be negative");
        assertThatThrownBy(() -> JobOptions.builder().lockAtMostFor(Duration.ofSeconds(10)).lockAtLeastFor(Duration.ofSeconds(20)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockAtLeastFor (20s) is longer than lockAtMostFor (10s)")
                .hasMessageContaining("make lockAtMostFor at least as long");
        assertThatThrownBy(() -> JobOptions.builder().onStoreUnavailable(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("SKIP_AND_LOG");
    }

    @Test
    void optionsAreValuesAndToBuilderKeepsEveryField() {
        JobOptions o = JobOptions.builder().lockAtMostFor(Duration.ofMinutes(2)).lockAtLeastFor(Duration.ofSeconds(5))
                .keepAlive(true).onStoreUnavailable(StoreFailurePolicy.FAIL).interruptOnLoss(false).build();
        assertThat(o.toBuilder().build()).isEqualTo(o).hasSameHashCodeAs(o);
        assertThat(JobOptions.defaults().lockAtMostFor()).isEqualTo(Duration.ofSeconds(30));
        assertThat(JobOptions.defaults().onStoreUnavailable()).isEqualTo(StoreFailurePolicy.SKIP_AND_LOG);
        assertThat(JobOptions.defaults().interruptOnLoss()).isTrue();
        assertThat(JobOptions.defaults().keepAlive()).isFalse();
    }

    @Test
    void listenersAreToldHowEveryRunEnded() throws Exception {
        List<JobRunReport> runs = new CopyOnWriteArrayList<>();
        JobRunner told = JobRunner.builder(turnstile)
                .listener(r -> { throw new AssertionError("a broken listener changes nothing, even with an Error"); })
                .listener(runs::add)
                .listener(r -> { throw new IllegalStateException("a broken listener changes nothing"); }).build();
        JobResult<Void> ran = told.run("reported", () -> { });
        assertThat(runs).singleElement().satisfies(r -> {
            assertThat(r.name()).isEqualTo("reported");
            assertThat(r.status()).isEqualTo(JobResult.Status.RAN);
            assertThat(r.fence()).isEqualTo(ran.fence().getAsLong());
            assertThat(r.failure()).isNull();
            assertThat(r.leaseLost()).isFalse();
            assertThat(r.took().isNegative()).isFalse();
            assertThat(turnstile.heldLeases()).as("told after the release").isEmpty();
        });
        runs.clear();
        var held = turnstile.tryAcquire("busy").orElseThrow();
        assertThat(told.run("busy", () -> { }).skipped()).isTrue();
        assertThat(runs).singleElement().satisfies(r -> {
            assertThat(r.status()).isEqualTo(JobResult.Status.SKIPPED_BUSY);
            assertThat(r.fence()).isEqualTo(-1);
        });
        held.release();
        runs.clear();
        assertThatThrownBy(() -> told.call("failing", () -> { throw new IOException("disk full"); })).isInstanceOf(IOException.class);
        assertThat(runs).singleElement().satisfies(r -> {
            assertThat(r.status()).isEqualTo(JobResult.Status.RAN);
            assertThat(r.failure()).isEqualTo("java.io.IOException: disk full");
        });
        runs.clear();
        try (Turnstile down = Turnstile.builder(new DownStore()).build()) {
            JobRunner downRunner = JobRunner.builder(down).listener(runs::add).build();
            assertThat(downRunner.run("down", () -> { }).status()).isEqualTo(JobResult.Status.SKIPPED_STORE_UNAVAILABLE);
            assertThatThrownBy(() -> downRunner.run("down", JobOptions.builder().onStoreUnavailable(StoreFailurePolicy.FAIL).build(),
                    () -> { })).isInstanceOf(StoreUnavailableException.class);
        }
        assertThat(runs).extracting(JobRunReport::status).containsExactly(JobResult.Status.SKIPPED_STORE_UNAVAILABLE,
                JobResult.Status.SKIPPED_STORE_UNAVAILABLE);
        assertThat(runs.get(0).failure()).contains("store is down");
        runs.clear();
        Turnstile closed = Turnstile.builder(new InMemoryLockStore()).build();
        JobRunner closedRunner = JobRunner.builder(closed).listener(runs::add).build();
        closed.close();
        assertThatThrownBy(() -> closedRunner.run("closed", () -> { })).isInstanceOf(IllegalStateException.class);
        assertThat(runs).as("a run that could not start is reported too").singleElement()
                .satisfies(r -> assertThat(r.status()).isEqualTo(JobResult.Status.SKIPPED_STORE_UNAVAILABLE));
        assertThatThrownBy(() -> JobRunner.builder(turnstile).listener(null)).hasMessageContaining("listener is null");
    }
}
