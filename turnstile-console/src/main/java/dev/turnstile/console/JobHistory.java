package dev.turnstile.console;

import dev.turnstile.job.JobListener;
import dev.turnstile.job.JobResult;
import dev.turnstile.job.JobRunReport;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What the scheduled jobs of this application did, for the console's jobs page: per job, its last
 * run and its last run that ran, and counts of runs, failures, lost leases and skips. Register it on
 * the {@link dev.turnstile.job.JobRunner} ({@code JobRunner.builder(t).listener(history)}; the
 * Spring Boot starter does so when the console is enabled) and give it to {@link
 * Console.Builder#jobs}. Keeps at most {@value #MAX_JOBS} job names (the oldest seen is dropped),
 * so jobs named per customer or per tenant cannot grow it without bound. Thread-safe.
 */
public final class JobHistory implements JobListener {
    /** The most job names kept. */
    public static final int MAX_JOBS = 1000;

    private final Map<String, Stats> jobs = new LinkedHashMap<>(16, 0.75f, true); // guarded by itself: access order

    /** Creates an empty history. */
    public JobHistory() {}

    /**
     * One job's record.
     *
     * @param name the job's lock name
     * @param last its last run, whatever its outcome
     * @param lastRan its last run that ran, or {@code null} if none did
     * @param runs how many runs ran
     * @param failures how many of those threw
     * @param leasesLost how many of those lost their lease while running
     * @param skippedBusy how many were skipped because another instance held the lock
     * @param skippedStoreUnavailable how many were skipped because the store could not be reached
     */
    public record JobStats(String name, JobRunReport last, @Nullable JobRunReport lastRan, long runs, long failures,
            long leasesLost, long skippedBusy, long skippedStoreUnavailable) {}

    private static final class Stats {
        JobRunReport last;
        @Nullable JobRunReport lastRan;
        long runs;
        long failures;
        long leasesLost;
        long skippedBusy;
        long skippedStoreUnavailable;

        Stats(JobRunReport first) {
            this.last = first;
        }
    }

    /** The longest failure text kept: an exception's message can be a whole response body. */
    static final int MAX_FAILURE = 500;

    @Override
    public void onJobEnded(JobRunReport report) {
        String failure = report.failure();
        JobRunReport run = failure == null || failure.length() <= MAX_FAILURE ? report
                : new JobRunReport(report.name(), report.status(), report.startedAt(), report.took(), report.fence(),
                        report.leaseLost(), failure.substring(0, MAX_FAILURE - 1) + "…");
        synchronized (jobs) {
            Stats s = jobs.computeIfAbsent(run.name(), n -> new Stats(run));
            s.last = run;
            if (run.status() == JobResult.Status.RAN) {
                s.lastRan = run;
                s.runs++;
                s.failures += run.failure() != null ? 1 : 0;
                s.leasesLost += run.leaseLost() ? 1 : 0;
            } else if (run.status() == JobResult.Status.SKIPPED_BUSY) {
                s.skippedBusy++;
            } else {
                s.skippedStoreUnavailable++;
            }
            if (jobs.size() > MAX_JOBS) {
                // access order: the first is the one least recently run
                jobs.remove(jobs.keySet().iterator().next());
            }
        }
    }

    /**
     * Every job seen, by name.
     *
     * @return a snapshot
     */
    public List<JobStats> jobs() {
        List<JobStats> out = new ArrayList<>();
        synchronized (jobs) {
            jobs.forEach((name, s) -> out.add(new JobStats(name, s.last, s.lastRan, s.runs, s.failures, s.leasesLost,
                    s.skippedBusy, s.skippedStoreUnavailable)));
        }
        out.sort(Comparator.comparing(JobStats::name));
        return out;
    }
}
