package dev.turnstile.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.LockInfo;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;

/** A graceful shutdown waits for running locked calls, then releases what this instance holds. */
class ShutdownTest {

    static class SlowJob {
        final CountDownLatch started = new CountDownLatch(1);
        final AtomicBoolean finished = new AtomicBoolean();

        @TurnstileLock(name = "${slow.name}", lockAtMostFor = "1m")
        public String slow() throws InterruptedException {
            started.countDown();
            Thread.sleep(400);
            finished.set(true);
            return "done";
        }

        public boolean awaitStarted() throws InterruptedException {
            return started.await(5, TimeUnit.SECONDS);
        }

        public boolean finished() {
            return finished.get();
        }
    }

    private final String held = Boot.unique("held");
    private final String slow = Boot.unique("slow");
    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(Boot.turnstile())
            .withBean(SlowJob.class).withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl(), "slow.name=" + slow);

    @Test
    void stopWaitsForRunningCallsThenReleasesHeldLeases() {
        runner.run(ctx -> {
            Turnstile turnstile = ctx.getBean(Turnstile.class);
            LockStore store = ctx.getBean(LockStore.class);
            turnstile.tryAcquire(held, LockOptions.lockAtMostFor(Duration.ofMinutes(5))).orElseThrow();
            SlowJob job = ctx.getBean(SlowJob.class);
            CompletableFuture<String> running = CompletableFuture.supplyAsync(() -> {
                try {
                    return job.slow();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(job.awaitStarted()).isTrue();
            assertThat(store.heldLocks()).extracting(LockInfo::name).contains(held, slow);

            ConfigurableApplicationContext context = (ConfigurableApplicationContext) ctx.getSourceApplicationContext();
            context.stop(); // what a graceful shutdown does before destroying beans
            assertThat(job.finished()).as("stop() waited for the running call").isTrue();
            assertThat(running.get(5, TimeUnit.SECONDS)).isEqualTo("done");
            assertThat(store.heldLocks()).extracting(LockInfo::name).doesNotContain(held, slow);
            assertThat(turnstile.heldLeases()).isEmpty();

            assertThat(job.slow()).as("stopped: new calls are skipped").isNull();
            context.start();
            assertThat(job.slow()).as("started again").isEqualTo("done");
        });
    }

    @Test
    void stopGivesUpWaitingAfterAwaitRunning() {
        runner.withPropertyValues("turnstile.shutdown.await-running=50ms").run(ctx -> {
            SlowJob job = ctx.getBean(SlowJob.class);
            CompletableFuture<String> running = CompletableFuture.supplyAsync(() -> {
                try {
                    return job.slow();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(job.awaitStarted()).isTrue();
            ((ConfigurableApplicationContext) ctx.getSourceApplicationContext()).stop();
            assertThat(job.finished()).isFalse();
            assertThat(ctx.getBean(LockStore.class).heldLocks()).extracting(LockInfo::name).doesNotContain(slow);
            running.get(5, TimeUnit.SECONDS);
        });
    }
}
