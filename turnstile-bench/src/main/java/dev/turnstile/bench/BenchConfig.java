package dev.turnstile.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The harness's settings, read from system properties so that {@code run.sh} can pass them with
 * {@code -D}. Every value has a default that gives a full, meaningful run.
 *
 * <ul>
 *   <li>{@code bench.slices} (12) and {@code bench.sliceMs} (1000): interleaved measurement slices
 *   <li>{@code bench.warmupMs} (2000): warm-up per contender and configuration
 *   <li>{@code bench.threads} ({@code 1,8}) and {@code bench.dbs} ({@code postgresql,sqlite})
 *   <li>{@code bench.seed} (42): seed of the per-slice shuffle, so a run can be repeated
 *   <li>{@code bench.handoffSeconds} (10), {@code bench.handoffProcesses} (4),
 *       {@code bench.handoffRounds} (2), {@code bench.handoffKinds} (all),
 *       {@code bench.handoffWarmupSeconds} (30: contended, unrecorded), {@code bench.handoffThreads} (1 per JVM)
 *   <li>{@code bench.pgUrl} ({@code jdbc:postgresql://127.0.0.1:5432/test?user=postgres})
 *   <li>{@code bench.redisUrl} ({@code redis://127.0.0.1:6379})
 *   <li>{@code bench.zookeeper} ({@code 127.0.0.1:2181}): the ZooKeeper server, host:port
 *   <li>{@code bench.waitThreads} (4) and {@code bench.waitHoldMicros} (100): the Redis
 *       same-JVM blocking scenario (threads on one name, hold time; 0 holds for no time)
 *   <li>{@code bench.report} ({@code turnstile-bench/target/bench-results.md}): Markdown output,
 *       appended to; the SQLite file, the hand-off event logs and the charts go next to it
 * </ul>
 */
final class BenchConfig {
    private BenchConfig() {}

    static int slices() {
        return positiveInt("bench.slices", 12);
    }

    static long sliceMillis() {
        return positiveInt("bench.sliceMs", 1000);
    }

    static long warmupMillis() {
        return Math.max(0, Integer.getInteger("bench.warmupMs", 2000));
    }

    static long seed() {
        return Long.getLong("bench.seed", 42L);
    }

    static List<Integer> threadCounts() {
        List<Integer> counts = new ArrayList<>();
        for (String s : System.getProperty("bench.threads", "1,8").split(",")) {
            int n = Integer.parseInt(s.trim());
            if (n < 1 || n > 64) {
                throw new IllegalArgumentException("bench.threads: " + n + " is not between 1 and 64");
            }
            counts.add(n);
        }
        return counts;
    }

    static List<BenchDatabase> databases() {
        List<BenchDatabase> dbs = new ArrayList<>();
        for (String s : System.getProperty("bench.dbs", "postgresql,sqlite").split(",")) {
            dbs.add(BenchDatabase.valueOf(s.trim().toUpperCase(Locale.ROOT)));
        }
        return dbs;
    }

    static int handoffSeconds() {
        return positiveInt("bench.handoffSeconds", 10);
    }

    static int handoffProcesses() {
        return positiveInt("bench.handoffProcesses", 4);
    }

    /** Waiting threads per hand-off JVM ({@code bench.handoffThreads}, 1): 8 JVMs of 25 make the 200-waiter cell. */
    static int handoffThreads() {
        return positiveInt("bench.handoffThreads", 1);
    }

    /**
     * The hand-off contenders to run: {@code bench.handoffKinds}, a comma-separated subset of
     * {@code all} (default: all of them), for quicker runs while working on one.
     */
    static List<String> handoffKinds(List<String> all) {
        String wanted = System.getProperty("bench.handoffKinds", "");
        if (wanted.isBlank()) {
            return all;
        }
        List<String> kinds = new ArrayList<>();
        for (String k : wanted.split(",")) {
            if (!all.contains(k.trim())) {
                throw new IllegalArgumentException("bench.handoffKinds: unknown kind '" + k.trim() + "': pick from " + all);
            }
            kinds.add(k.trim());
        }
        return kinds;
    }

    /** Seconds the hand-off loops run contended, unrecorded, before the measured window. */
    static int handoffWarmupSeconds() {
        return Math.max(0, Integer.getInteger("bench.handoffWarmupSeconds", 30));
    }

    static int handoffRounds() {
        return positiveInt("bench.handoffRounds", 2);
    }

    static String postgresUrl() {
        return System.getProperty("bench.pgUrl", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
    }

    /** The ZooKeeper server of the ZooKeeper benchmarks: {@code bench.zookeeper}, host:port. */
    static String zookeeper() {
        return System.getProperty("bench.zookeeper", "127.0.0.1:2181");
    }

    static String redisUrl() {
        return System.getProperty("bench.redisUrl", "redis://127.0.0.1:6379");
    }

    static int waitThreads() {
        return positiveInt("bench.waitThreads", 4);
    }

    static long waitHoldMicros() {
        return Math.max(0, Integer.getInteger("bench.waitHoldMicros", 100));
    }

    static Path reportFile() {
        return Path.of(System.getProperty("bench.report", "turnstile-bench/target/bench-results.md")).toAbsolutePath();
    }

    /** Where scratch files (SQLite database, hand-off logs) go: beside the report. */
    static Path workDir() {
        return reportFile().getParent();
    }

    private static int positiveInt(String key, int def) {
        int v = Integer.getInteger(key, def);
        if (v < 1) {
            throw new IllegalArgumentException(key + "=" + v + ": give a positive whole number");
        }
        return v;
    }
}
