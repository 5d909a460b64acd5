package dev.turnstile.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Uncontended acquire+release throughput and latency of Turnstile, the raw SQL floor, ShedLock and
 * Spring Integration, side by side on one shared pool per database.
 *
 * <p>Not JMH on purpose: the contenders run in short slices, each right beside a slice of the
 * floor (in shuffled order, alternating which goes first), so a burst of machine noise hits both
 * alike, and each result is compared with the floor's slice next to it. The report gives, per
 * contender, the median over slices of that ratio with its min and max, and the absolute medians.
 *
 * <p>Settings are system properties; see {@link BenchConfig}.
 */
public final class AcquireReleaseBench {
    private AcquireReleaseBench() {}

    /** The acquire+release table's columns, shared with the Redis benchmark. */
    static Report newReport(String storeColumn) {
        return new Report("contender", storeColumn, "threads", "ops/s (median)", "mean latency", "p99 latency",
                "latency ÷ floor", "floor ops/s ÷ ops/s", "failures");
    }

    /**
     * Runs the benchmark and appends its table to the report.
     *
     * @param args ignored; use {@code -Dbench.*} system properties
     * @throws Exception if a database cannot be reached or set up
     */
    public static void main(String[] args) throws Exception {
        Logging.quiet();
        int slices = BenchConfig.slices();
        long sliceNanos = TimeUnit.MILLISECONDS.toNanos(BenchConfig.sliceMillis());
        long warmupNanos = TimeUnit.MILLISECONDS.toNanos(BenchConfig.warmupMillis());
        List<Integer> threadCounts = BenchConfig.threadCounts();
        int maxThreads = Collections.max(threadCounts);
        Random shuffle = new Random(BenchConfig.seed());

        Report report = newReport("db");
        for (BenchDatabase db : BenchConfig.databases()) {
            // One pool for every contender, larger than the thread count so no one queues for a connection.
            try (HikariDataSource pool = db.openPool(Math.max(10, maxThreads + 2), "bench-" + db.id());
                    SliceRunner runner = new SliceRunner(maxThreads)) {
                db.prepare(pool);
                List<Contender> contenders = List.of(new FloorContender(pool, db), new TurnstileContender(pool),
                        new ShedLockContender(pool), new SpringContender(pool));
                try {
                    for (int threads : threadCounts) {
                        SliceRunner.Paired<Contender, SliceResult> results = measure(runner, contenders, threads, slices,
                                warmupNanos, sliceNanos, shuffle);
                        System.err.printf("%s, %d thread(s): %d slices done%n", db.id(), threads, slices);
                        addRows(report, db.id(), threads, results, contenders.get(0));
                    }
                } finally {
                    for (Contender c : contenders) {
                        c.close();
                    }
                    db.deleteBenchRows(pool);
                }
            }
        }
        report.emit("Acquire + release, uncontended", String.format(
                "%d slices of %d ms per contender, each beside a floor slice (pairs in shuffled order, alternating which "
                        + "goes first); warm-up %d ms per contender. "
                        + "Latency is one acquire+release cycle. Ratios are per slice against the FLOOR slice beside it: "
                        + "median [min–max]; above 1 means slower than the floor. SQLite serialises writers: with several threads "
                        + "its tail latency is SQLite's busy-handler sleeps, for every contender alike.",
                slices, BenchConfig.sliceMillis(), BenchConfig.warmupMillis()));
    }

    /**
     * Warms up and measures every contender with {@code threads} threads, each slice beside one of
     * the floor's (the first contender).
     *
     * @return each contender's slices and the floor slices paired with them
     */
    static SliceRunner.Paired<Contender, SliceResult> measure(SliceRunner runner, List<Contender> contenders, int threads,
            int slices, long warmupNanos, long sliceNanos, Random shuffle) throws Exception {
        return SliceRunner.interleavePaired(contenders, contenders.get(0), slices, warmupNanos, sliceNanos, shuffle,
                (c, nanos) -> runner.run(c, threads, nanos));
    }

    /** Per slice: the contender's mean latency over the floor's in the same slice. */
    static double[] latencyRatios(List<SliceResult> mine, List<SliceResult> floor) {
        double[] r = new double[mine.size()];
        for (int i = 0; i < r.length; i++) {
            r[i] = mine.get(i).meanNanos() / floor.get(i).meanNanos();
        }
        return r;
    }

    /**
     * Adds one row per contender: absolute medians over slices and the per-slice ratios to the floor.
     *
     * @param store the store column, such as {@code postgresql} or {@code redis}
     */
    static void addRows(Report report, String store, int threads, SliceRunner.Paired<Contender, SliceResult> results,
            Contender floor) {
        for (Map.Entry<Contender, List<SliceResult>> e : results.results().entrySet()) {
            List<SliceResult> mine = e.getValue();
            List<SliceResult> floorSlices = results.floorOf().get(e.getKey());
            int n = mine.size();
            double[] ops = new double[n];
            double[] mean = new double[n];
            double[] p99 = new double[n];
            double[] latencyRatio = latencyRatios(mine, floorSlices);
            double[] throughputRatio = new double[n];
            long failures = 0;
            for (int i = 0; i < n; i++) {
                SliceResult r = mine.get(i);
                SliceResult f = floorSlices.get(i);
                ops[i] = r.opsPerSecond();
                mean[i] = r.meanNanos();
                p99[i] = r.p99Nanos();
                throughputRatio[i] = f.opsPerSecond() / r.opsPerSecond();
                failures += r.failures();
            }
            boolean isFloor = e.getKey() == floor;
            report.row(e.getKey().id(), store, threads, Report.number(Stats.median(ops), 0),
                    Report.micros(Stats.median(mean)), Report.micros(Stats.median(p99)),
                    isFloor ? "—" : Report.ratio(Stats.median(latencyRatio), Stats.min(latencyRatio), Stats.max(latencyRatio)),
                    isFloor ? "—" : Report.ratio(Stats.median(throughputRatio), Stats.min(throughputRatio),
                            Stats.max(throughputRatio)),
                    failures == 0 ? "0" : "**FAILED " + failures + "**");
        }
    }
}
