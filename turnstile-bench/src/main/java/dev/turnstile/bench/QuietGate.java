package dev.turnstile.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Whether the machine stayed quiet while a pair of slices ran. A load average counts the
 * benchmark's own threads and cannot tell a busy benchmark from a busy neighbour; this counts, from
 * {@code /proc}, the CPU time that every other process used meanwhile: all but this JVM, its child
 * processes (the hand-off JVMs), kernel threads, and the store servers the benchmark talks to
 * (PostgreSQL, MariaDB, Redis, ZooKeeper, the MongoDB bench server). A pair taken while the others
 * used more than {@code bench.maxForeignCpu} cores (default 0.25) is thrown away and run again, up
 * to {@code bench.quietRetries} times (default 20) and past {@code bench.quietBudget} thrown-away
 * pairs in a table (default 200); then it is kept and counted as not quiet. {@link Report#emit}
 * prints what happened under each table. Store servers are known by their process names, so
 * another run's load on the same servers is not seen. Linux only: elsewhere every pair counts as
 * quiet and the report says the check did not run.
 */
final class QuietGate {
    private static final Path PROC = Path.of("/proc");
    /** Linux's USER_HZ: the unit of utime and stime in /proc/[pid]/stat on every architecture Linux runs Java on. */
    private static final double TICKS_PER_SECOND = 100;
    private static final Set<String> STORE_COMMANDS = Set.of("postgres", "redis-server", "mariadbd", "mysqld");
    /** Store servers that run in a JVM, told apart by their command line. */
    private static final List<String> STORE_JVM_MARKS = List.of("org.apache.zookeeper.server", "MongoBenchServer");
    private static final long SELF = ProcessHandle.current().pid();
    private static final Map<Long, Boolean> STORE_CACHE = new ConcurrentHashMap<>();

    /** Pairs thrown away per table at most: past it, a machine that stays busy gets its figures, marked. */
    private static final int TABLE_BUDGET = Integer.getInteger("bench.quietBudget", 200);
    private static final List<Double> kept = new ArrayList<>();
    private static int thrownAway;
    private static int keptNotQuiet;
    private static double worstThrownAway;

    private QuietGate() {}

    static double maxForeignCores() {
        return Double.parseDouble(System.getProperty("bench.maxForeignCpu", "0.25"));
    }

    static int retries() {
        return Integer.getInteger("bench.quietRetries", 20);
    }

    /** CPU ticks per process of the others, and when they were read; null off Linux. */
    record Sample(long nanos, Map<Long, Long> ticks) {}

    static Sample sample() {
        if (!Files.isDirectory(PROC.resolve("self"))) {
            return null;
        }
        Map<Long, long[]> stats = new HashMap<>(); // pid -> {ppid, ticks}
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(PROC, "[0-9]*")) {
            for (Path dir : dirs) {
                long pid = Long.parseLong(dir.getFileName().toString());
                String stat;
                try {
                    stat = Files.readString(dir.resolve("stat"), StandardCharsets.UTF_8);
                } catch (IOException gone) {
                    continue; // exited while listed ("No such process"), or not ours to read: one process, not the sample
                }
                // pid (comm) state ppid ... utime stime: comm may hold spaces and parentheses
                String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                long ppid = Long.parseLong(f[1]);
                if (pid == 2 || ppid == 2 || STORE_COMMANDS.contains(comm) || isStoreJvm(pid, comm, dir)) {
                    continue; // kernel threads, store servers
                }
                stats.put(pid, new long[] {ppid, Long.parseLong(f[11]) + Long.parseLong(f[12])});
            }
        } catch (IOException e) {
            return null;
        }
        Map<Long, Long> ticks = new HashMap<>();
        for (Map.Entry<Long, long[]> e : stats.entrySet()) {
            if (!ours(e.getKey(), stats)) {
                ticks.put(e.getKey(), e.getValue()[1]);
            }
        }
        return new Sample(System.nanoTime(), ticks);
    }

    private static boolean isStoreJvm(long pid, String comm, Path dir) {
        if (!comm.equals("java")) {
            return false;
        }
        return STORE_CACHE.computeIfAbsent(pid, p -> {
            try {
                String cmdline = Files.readString(dir.resolve("cmdline"), StandardCharsets.UTF_8);
                return STORE_JVM_MARKS.stream().anyMatch(cmdline::contains);
            } catch (IOException e) {
                return false;
            }
        });
    }

    /** This JVM or one of its descendants. */
    private static boolean ours(long pid, Map<Long, long[]> stats) {
        for (long p = pid, hops = 0; p > 1 && hops < 64; hops++) {
            if (p == SELF) {
                return true;
            }
            long[] s = stats.get(p);
            if (s == null) {
                return false;
            }
            p = s[0];
        }
        return false;
    }

    /** Cores the others used since {@code before} (a process that started meanwhile counts whole); 0 off Linux. */
    static double foreignCores(Sample before) {
        Sample after = sample();
        if (before == null || after == null) {
            return 0;
        }
        long ticks = 0;
        for (Map.Entry<Long, Long> e : after.ticks().entrySet()) {
            ticks += Math.max(0, e.getValue() - before.ticks().getOrDefault(e.getKey(), 0L));
        }
        double seconds = (after.nanos() - before.nanos()) / 1e9;
        return seconds <= 0 ? 0 : ticks / TICKS_PER_SECOND / seconds;
    }

    /**
     * Records a pair's foreign CPU and says whether to keep it.
     *
     * @param attempt how many times this pair was thrown away already
     * @return whether the pair is kept
     */
    static synchronized boolean judge(double foreign, int attempt) {
        if (foreign <= maxForeignCores() || attempt >= retries() || thrownAway >= TABLE_BUDGET) {
            kept.add(foreign);
            if (foreign > maxForeignCores()) {
                keptNotQuiet++;
            }
            return true;
        }
        thrownAway++;
        worstThrownAway = Math.max(worstThrownAway, foreign);
        System.err.printf(Locale.ROOT, "quiet check: other processes used %.2f cores during a pair of slices: run again%n", foreign);
        return false;
    }

    /** What the check saw since the last call, for the notes under a table; then starts afresh. */
    static synchronized String summaryAndReset() {
        if (sample() == null) {
            return "Quiet check: not run (no /proc).";
        }
        if (kept.isEmpty() && thrownAway == 0) {
            return "Quiet check: none (this table is not measured in pairs of slices); load average (1 min) when it was "
                    + "written: " + loadAverage() + ".";
        }
        double[] k = kept.stream().mapToDouble(Double::doubleValue).toArray();
        String s = String.format(Locale.ROOT, "Quiet check (CPU used by processes other than the benchmark and the store "
                + "servers, from /proc, per pair of slices): kept pairs median %.2f cores, max %.2f; %d pairs thrown away "
                + "above %.2f cores (worst %.2f) and run again; %d kept although not quiet (after %d tries, or past %d "
                + "thrown away in the table). Load average "
                + "(1 min) when the table was written: %s.", k.length == 0 ? 0 : Stats.median(k), k.length == 0 ? 0 : Stats.max(k),
                thrownAway, maxForeignCores(), worstThrownAway, keptNotQuiet, retries(), TABLE_BUDGET, loadAverage());
        kept.clear();
        thrownAway = 0;
        keptNotQuiet = 0;
        worstThrownAway = 0;
        return s;
    }

    private static String loadAverage() {
        try {
            return Files.readString(PROC.resolve("loadavg")).split(" ")[0];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }
}
