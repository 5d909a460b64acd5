package dev.turnstile.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * Cross-process hand-off on PostgreSQL: N child JVMs ({@link HandoffChild}) loop acquire, hold
 * 1 ms, release on one lock name for D seconds. Their logs, merged on the shared monotonic clock,
 * show how fast the lock passes to another process, how fairly it is shared (a releaser that
 * re-acquires at once can starve the others) and how much CPU waiting costs.
 *
 * <p>Contenders run one after the other, as each uses N JVMs: Turnstile, Spring, Turnstile,
 * Spring… for {@code bench.handoffRounds} rounds. ShedLock is absent: it has no waiting acquire.
 * Settings are system properties; see {@link BenchConfig}.
 */
public final class HandoffBench {
    private static final String LOCK_NAME = "bench-handoff";
    private static final List<String> CONTENDERS = List.of("turnstile", "spring");

    private HandoffBench() {}

    /**
     * Runs the rounds and appends the table to the report.
     *
     * @param args ignored; use {@code -Dbench.*} system properties
     * @throws Exception if a child fails or PostgreSQL cannot be reached
     */
    public static void main(String[] args) throws Exception {
        Logging.quiet();
        int processes = BenchConfig.handoffProcesses();
        int seconds = BenchConfig.handoffSeconds();
        int rounds = BenchConfig.handoffRounds();
        Path dir = BenchConfig.workDir().resolve("handoff");
        Files.createDirectories(dir);

        Report report = new Report("contender (round)", "acquisitions/s", "hand-offs/s to another process",
                "gap p50", "gap p99", "gap max", "fairness (min–max share)", "CPU s per waiter per s", "overlaps");
        try (HikariDataSource pool = BenchDatabase.POSTGRESQL.openPool(1, "handoff-parent")) {
            for (int round = 1; round <= rounds; round++) {
                for (String which : CONTENDERS) {
                    BenchDatabase.POSTGRESQL.prepare(pool); // no leftover lease from an earlier round
                    HandoffResult r = runRound(which, round, processes, seconds, dir);
                    System.err.printf("hand-off %s round %d: %d acquisitions%n", which, round, r.acquisitions());
                    report.row(which.toUpperCase(Locale.ROOT) + " (" + round + ")",
                            Report.number(r.acquisitions() / r.seconds(), 1),
                            Report.number(r.handoffs() / r.seconds(), 1),
                            Report.millis(r.gapP50Nanos()), Report.millis(r.gapP99Nanos()), Report.millis(r.gapMaxNanos()),
                            String.format(Locale.ROOT, "%.1f%%–%.1f%%", 100 * r.minShare(), 100 * r.maxShare()),
                            Report.number(r.cpuPerSecond(), 3),
                            r.overlaps() == 0 ? "0" : "**" + r.overlaps() + "**");
                }
            }
            BenchDatabase.POSTGRESQL.deleteBenchRows(pool);
        }
        report.emit("Cross-process hand-off, PostgreSQL", String.format(Locale.ROOT,
                "%d JVMs loop acquire (wait up to 30 s), hold 1 ms (sleep), release, for %d s per round. Gap = release "
                        + "call to the next holder's acquire return, only when the lock passes to another process. "
                        + "Fair share would be %.1f%% each. CPU includes each JVM's own JIT and GC. Turnstile: default "
                        + "poll 2 ms–1 s with backoff; Spring: default idleBetweenTries 100 ms.",
                processes, seconds, 100.0 / processes));
    }

    /** Builds the waiting contender a child runs; shared with {@link HandoffChild}. */
    static WaitingContender contender(String which, DataSource pool) {
        return switch (which) {
            case "turnstile" -> new TurnstileContender(pool);
            case "spring" -> new SpringContender(pool);
            default -> throw new IllegalArgumentException("unknown hand-off contender '" + which + "': turnstile or spring");
        };
    }

    private static HandoffResult runRound(String which, int round, int processes, int seconds, Path dir)
            throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> children = new ArrayList<>();
        List<Path> logs = new ArrayList<>();
        try {
            for (int i = 0; i < processes; i++) {
                Path log = dir.resolve(which + "-" + round + "-" + i + ".log");
                Files.deleteIfExists(log);
                logs.add(log);
                ProcessBuilder pb = new ProcessBuilder(java, "-Xmx256m", "-Dbench.pgUrl=" + BenchConfig.postgresUrl(),
                        "-cp", System.getProperty("java.class.path"), HandoffChild.class.getName(), which, LOCK_NAME,
                        log.toString());
                pb.redirectError(ProcessBuilder.Redirect.INHERIT);
                children.add(pb.start());
            }
            // Start the loops only when every JVM is up and warm, so no process gets a head start.
            for (Process child : children) {
                BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
                String line = out.readLine();
                if (!"READY".equals(line)) {
                    throw new IllegalStateException("hand-off child " + child.pid() + " did not get ready (said " + line
                            + ", exit " + (child.isAlive() ? "still running" : child.exitValue()) + ")");
                }
            }
            long start = System.nanoTime();
            long end = start + TimeUnit.SECONDS.toNanos(seconds);
            for (Process child : children) {
                OutputStream in = child.getOutputStream();
                in.write(("GO " + end + "\n").getBytes(StandardCharsets.UTF_8));
                in.flush();
            }
            List<HandoffLog> parsed = new ArrayList<>();
            for (int i = 0; i < processes; i++) {
                Process child = children.get(i);
                if (!child.waitFor(seconds + 120L, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("hand-off child " + child.pid() + " did not finish");
                }
                if (child.exitValue() != 0) {
                    throw new IllegalStateException("hand-off child " + child.pid() + " exited with " + child.exitValue());
                }
                parsed.add(HandoffLog.read(logs.get(i)));
            }
            return HandoffResult.of(parsed, start, end);
        } finally {
            for (Process child : children) {
                if (child.isAlive()) {
                    child.destroyForcibly();
                }
            }
        }
    }
}
