package dev.turnstile.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.Lease;
import dev.turnstile.Turnstile;
import dev.turnstile.job.JobResult;
import dev.turnstile.job.JobRunReport;
import dev.turnstile.job.JobRunner;
import dev.turnstile.leader.Leadership;
import dev.turnstile.testing.InMemoryLockStore;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The jobs page from a {@link JobHistory} fed by a real {@link JobRunner}, and the leadership page. */
class JobsAndLeadersPagesTest {
    private static final String HOSTILE = "<img src=x onerror=alert(1)>";

    private final InMemoryLockStore store = new InMemoryLockStore();
    private final Turnstile turnstile = Turnstile.builder(store).owner("app-1").build();

    @AfterEach
    void close() {
        turnstile.close();
        store.close();
    }

    private static ConsoleRequest get(String path) {
        return new ConsoleRequest("GET", path, Map.of(), "", null, "127.0.0.1", null, "h", null, Map.of());
    }

    @Test
    void jobsPageShowsEachJobsNextTickFromItsScheduler() throws Exception {
        JobHistory history = new JobHistory();
        JobRunner runner = JobRunner.builder(turnstile).listener(history).build();
        java.util.concurrent.ScheduledExecutorService executor = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try {
            dev.turnstile.job.LockingScheduler scheduler = dev.turnstile.job.LockingScheduler.wrap(executor, runner);
            var hourly = scheduler.scheduleAtFixedRate("hourly", dev.turnstile.job.JobOptions.defaults(), () -> { }, 1, 1,
                    java.util.concurrent.TimeUnit.HOURS);
            scheduler.scheduleWithFixedDelay(HOSTILE, dev.turnstile.job.JobOptions.defaults(), () -> { }, 2, 2,
                    java.util.concurrent.TimeUnit.HOURS);
            runner.run("hourly", () -> { });
            Console console = Console.builder(turnstile).jobs(history).nextTicks(scheduler::nextTicks).build();
            String body = console.handle(get("/jobs")).body();
            assertThat(body).contains("2 jobs").contains("(in 59 min").contains("(in 1 h 59 min").contains("not run yet")
                    .contains("&lt;img src=x onerror=alert(1)&gt;").doesNotContain("<img");
            assertThat(body.indexOf(">hourly<")).isGreaterThan(body.indexOf("&lt;img")); // by name
            hourly.cancel(false);
            assertThat(scheduler.nextTicks()).containsOnlyKeys(HOSTILE);
            String after = console.handle(get("/jobs")).body();
            assertThat(after).contains(">hourly<").contains("not known"); // it ran once: still listed, no tick
        } finally {
            executor.shutdownNow();
        }
    }

    @Test
    void jobsPageShowsWhatEachJobDidWithNamesEscaped() throws Exception {
        JobHistory history = new JobHistory();
        JobRunner runner = JobRunner.builder(turnstile).listener(history).build();
        runner.run("nightly-report", () -> { });
        runner.run("nightly-report", () -> { });
        Lease held = turnstile.tryAcquire(HOSTILE).orElseThrow();
        runner.run(HOSTILE, () -> { });
        held.release();
        try {
            runner.call("sync", () -> {
                throw new IOException("<b>disk</b> full");
            });
        } catch (IOException expected) {
            // the page shows it
        }
        String body = Console.builder(turnstile).jobs(history).build().handle(get("/jobs")).body();
        assertThat(body).contains("Jobs scheduled or run through this instance (app-1)").contains("3 jobs")
                .contains("&lt;img src=x onerror=alert(1)&gt;").contains("skipped: held elsewhere")
                .contains("failed: java.io.IOException: &lt;b&gt;disk&lt;/b&gt; full")
                .doesNotContain("<img").doesNotContain("<b>disk");
        assertThat(history.jobs()).extracting(JobHistory.JobStats::name).containsExactly(HOSTILE, "nightly-report", "sync");
        JobHistory.JobStats nightly = history.jobs().get(1);
        assertThat(nightly.runs()).isEqualTo(2);
        assertThat(nightly.lastRan()).isNotNull();
        JobHistory.JobStats busy = history.jobs().get(0);
        assertThat(busy.skippedBusy()).isEqualTo(1);
        assertThat(busy.lastRan()).isNull();
        assertThat(body).contains("never");
        assertThat(history.jobs().get(2).failures()).isEqualTo(1);
    }

    @Test
    void longFailureTextsAreCut() {
        JobHistory history = new JobHistory();
        history.onJobEnded(new JobRunReport("j", JobResult.Status.RAN, Instant.now(), Duration.ZERO, 1, false, "x".repeat(100_000)));
        assertThat(history.jobs().get(0).last().failure()).hasSize(JobHistory.MAX_FAILURE).endsWith("…");
    }

    @Test
    void withoutAHistoryTheJobsPageSaysHowToGetOne() {
        String body = Console.builder(turnstile).build().handle(get("/jobs")).body();
        assertThat(body).contains("JobHistory").contains("turnstile console</code> runs no jobs");
    }

    @Test
    void theHistoryKeepsABoundedNumberOfJobs() {
        JobHistory history = new JobHistory();
        for (int i = 0; i <= JobHistory.MAX_JOBS; i++) {
            history.onJobEnded(new JobRunReport("job-" + i, JobResult.Status.RAN, Instant.now(), Duration.ZERO, i, false, null));
        }
        assertThat(history.jobs()).hasSize(JobHistory.MAX_JOBS).extracting(JobHistory.JobStats::name).doesNotContain("job-0");
    }

    @Test
    void leadershipPageShowsWhoLeadsEachRoleAndWhatThisInstanceDoes() throws Exception {
        try (Leadership billing = Leadership.builder(turnstile, "billing").lockAtMostFor(Duration.ofSeconds(30)).build()) {
            billing.start();
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (!billing.isLeader() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(billing.isLeader()).isTrue();
            try (Turnstile other = Turnstile.builder(store).owner("other-9").build()) {
                other.tryAcquire(HOSTILE).orElseThrow();
                Console console = Console.builder(turnstile).roles(() -> List.of(HOSTILE, "orphan"))
                        .leaderships(() -> List.of(billing)).build();
                String body = console.handle(get("/leaders")).body();
                assertThat(body).contains("3 roles").contains(">billing<").contains("leads (term " + billing.currentTerm()
                        .orElseThrow().fence() + ")").contains("&lt;img src=x onerror=alert(1)&gt;").contains("other-9")
                        .contains(">orphan<").contains(">none<").doesNotContain("<img");
            }
        }
        assertThat(Console.builder(turnstile).build().handle(get("/leaders")).body()).contains("No roles are known");
        assertThatThrownBy(() -> Console.builder(turnstile).jobs(null)).hasMessageContaining("job history is null");
        assertThatThrownBy(() -> Console.builder(turnstile).roles(null)).hasMessageContaining("roles is null");
        assertThatThrownBy(() -> Console.builder(turnstile).leaderships(null)).hasMessageContaining("leaderships is null");
    }
}
