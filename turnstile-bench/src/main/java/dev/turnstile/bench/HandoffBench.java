package dev.turnstile.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.spi.LockStores;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import dev.turnstile.zookeeper.ZooKeeperLockStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;

/**
 * Cross-process hand-off: N child JVMs ({@link HandoffChild}) loop acquire, hold 1 ms, release on
 * one lock name for D seconds. Their logs, merged on the shared monotonic clock, show how fast the
 * lock passes to another process, how fairly it is shared (a releaser that re-acquires at once can
 * starve the others) and how much CPU waiting costs.
 *
 * <p>The argument picks the store: {@code postgresql} (the default: Turnstile and Spring's
 * JdbcLockRegistry) or {@code redis} (Turnstile, Redisson, Spring's RedisLockRegistry in spin and
 * pub-sub mode; the Redis section also gets {@code redis-handoff.png}) or {@code zookeeper}
 * (Turnstile's {@code ZooKeeperLockStore} and Curator's {@code InterProcessMutex}, on the server
 * {@code bench.zookeeper}). Contenders run one after
 * the other, as each uses N JVMs, for {@code bench.handoffRounds} rounds. ShedLock is absent: it
 * has no waiting acquire. Settings are system properties; see {@link BenchConfig}.
 */
public final class HandoffBench {
    private static final String LOCK_NAME = "bench-handoff";
    private static final List<String> POSTGRES_KINDS = List.of("turnstile", "spring");
    private static final List<String> REDIS_KINDS =
            List.of("redis-turnstile", "redis-redisson", "redis-spring-spin", "redis-spring-pubsub");
    private static final List<String> ZOOKEEPER_KINDS = List.of("zookeeper-turnstile", "zookeeper-curator");

    private HandoffBench() {}

    /** Clears leftovers of earlier rounds. */
    @FunctionalInterface
    private interface Prepare {
        void run() throws Exception;
    }

    /** The store's own count of requests served so far (commands, transactions, requests). */
    @FunctionalInterface
    private interface Requests {
        long count() throws Exception;
    }

    /** Redis: the calls of every command so far ({@code INFO commandstats}). */
    private static long redisCalls() {
        io.lettuce.core.RedisClient client = BenchRedis.lettuce();
        try (var c = client.connect()) {
            long calls = 0;
            for (String line : c.sync().info("commandstats").split("\r?\n")) {
                int at = line.indexOf("calls=");
                if (line.startsWith("cmdstat_") && at > 0) {
                    calls += Long.parseLong(line.substring(at + 6, line.indexOf(',', at)));
                }
            }
            return calls;
        } finally {
            client.shutdown();
        }
    }

    /** PostgreSQL: transactions committed and rolled back in the bench database so far. */
    private static long pgTransactions(HikariDataSource pool) throws java.sql.SQLException {
        try (var c = pool.getConnection(); var st = c.createStatement();
                var rs = st.executeQuery("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Runs the rounds and appends the table to the report.
     *
     * @param args {@code postgresql} (default) or {@code redis}; otherwise {@code -Dbench.*} system properties
     * @throws Exception if a child fails or the store cannot be reached
     */
    public static void main(String[] args) throws Exception {
        Logging.quiet();
        String store = args.length > 0 ? args[0].toLowerCase(Locale.ROOT) : "postgresql";
        int processes = BenchConfig.handoffProcesses();
        int seconds = BenchConfig.handoffSeconds();
        int rounds = BenchConfig.handoffRounds();
        int threads = BenchConfig.handoffThreads();
        String common = threads == 1 ? String.format(Locale.ROOT,
                "%d JVMs loop acquire (wait up to 30 s), hold 1 ms (sleep), release, for %d s per round, after "
                        + BenchConfig.handoffWarmupSeconds() + " s of the same loop unrecorded (JIT warm-up). Gap = release "
                        + "call to the next holder's acquire return, only when the lock passes to another process. "
                        + "Fair share would be %.1f%% each. Store requests: the server's own count over the measured "
                        + "window (Redis: calls in INFO commandstats, a script's own commands included; ZooKeeper: srvr's Received; PostgreSQL: transactions "
                        + "in pg_stat_database, which a busy backend reports up to 1 s late) per acquisition. CPU includes "
                        + "each JVM's own JIT and GC",
                processes, seconds, 100.0 / processes)
                : String.format(Locale.ROOT,
                "%d JVMs of %d threads each (%d waiters) loop acquire (wait up to 30 s), hold 1 ms (sleep), release, for "
                        + "%d s per round, after " + BenchConfig.handoffWarmupSeconds() + " s of the same loop unrecorded "
                        + "(JIT warm-up). Gap = release call to the next holder's acquire return, when the lock passes to "
                        + "another waiter (thread or process). Fair share would be %.2f%% each. Store requests: the server's "
                        + "own count over the measured window (Redis: calls in INFO commandstats, a script's own commands included; ZooKeeper: srvr's Received; "
                        + "PostgreSQL: transactions in pg_stat_database, which a busy backend reports up to 1 s late) per "
                        + "acquisition. CPU per waiter: each JVM's CPU (its JIT and GC included) divided by its threads",
                processes, threads, processes * threads, seconds, 100.0 / (processes * threads));
        switch (store) {
            case "postgresql" -> {
                try (HikariDataSource pool = BenchDatabase.POSTGRESQL.openPool(1, "handoff-parent")) {
                    Report report = newReport();
                    runAll(report, BenchConfig.handoffKinds(POSTGRES_KINDS), rounds, processes, seconds, () -> BenchDatabase.POSTGRESQL.prepare(pool),
                            () -> pgTransactions(pool));
                    BenchDatabase.POSTGRESQL.deleteBenchRows(pool);
                    report.emit("Cross-process hand-off, PostgreSQL", common + ". Turnstile: default poll 2 ms–500 ms with "
                            + "backoff; Spring: default idleBetweenTries 100 ms.");
                }
            }
            case "redis" -> {
                if (System.getProperty("java.awt.headless") == null) {
                    System.setProperty("java.awt.headless", "true");
                }
                Report report = newReport();
                Map<String, List<HandoffResult>> results;
                try {
                    results = runAll(report, BenchConfig.handoffKinds(REDIS_KINDS), rounds, processes, seconds, BenchRedis::deleteBenchKeys,
                            HandoffBench::redisCalls);
                } finally {
                    BenchRedis.deleteBenchKeys();
                }
                Path png = Report.chartFile("redis-handoff.png");
                handoffChart(results, rounds, processes, seconds).write(png);
                report.emit("Redis: cross-process hand-off (S3x)", common + ", but not the Redis server's. TURNSTILE: "
                        + "`LockStores.open(\"" + BenchConfig.redisUrl() + "\")`, woken by the release's PUBLISH, polling at least 50 ms apart "
                        + "(up to 500 ms) as the fallback; REDISSON: `tryLock(30, 30, SECONDS)`, default config (woken by its "
                        + "unlock message); SPRING_SPIN: RedisLockRegistry SPIN_LOCK, retries every 100 ms "
                        + "(idleBetweenTries); SPRING_PUBSUB: PUB_SUB_LOCK, woken by the unlock message.", png);
            }
            case "zookeeper" -> {
                Report report = newReport();
                runAll(report, BenchConfig.handoffKinds(ZOOKEEPER_KINDS), rounds, processes, seconds, () -> { },
                        () -> ZooKeeperRequests.received(BenchConfig.zookeeper()));
                report.emit("ZooKeeper: cross-process hand-off", common + ", but not the ZooKeeper server's (its own process, "
                        + "standalone, on this machine). Each JVM has its own Curator " + RedisBench.version(CuratorFramework.class)
                        + " client (its own session). TURNSTILE: `ZooKeeperLockStore` over it, `acquire(name, 30 s)`: a waiter keeps "
                        + "one sequential node as its place in line and is woken by the deletion of the node ahead of it, with "
                        + "the default fallback poll (at least 50 ms apart); CURATOR: `InterProcessMutex.acquire(30, SECONDS)` + "
                        + "`release()` (sequential node, watch on the predecessor).");
            }
            default -> throw new IllegalArgumentException("HandoffBench: unknown store '" + store + "': postgresql, redis or zookeeper");
        }
    }

    private static Report newReport() {
        boolean threads = BenchConfig.handoffThreads() > 1;
        return threads
                ? new Report("contender (round)", "acquisitions/s", "hand-offs/s to another waiter", "of which to another JVM",
                        "gap p50", "gap p99", "gap max", "fairness (min–max share)", "CPU s per waiter per s",
                        "store requests per acquisition", "overlaps")
                : new Report("contender (round)", "acquisitions/s", "hand-offs/s to another process",
                "gap p50", "gap p99", "gap max", "fairness (min–max share)", "CPU s per waiter per s",
                "store requests per acquisition", "overlaps");
    }

    /** Runs every kind once per round, in that order, and adds a row per run. */
    private static Map<String, List<HandoffResult>> runAll(Report report, List<String> kinds, int rounds, int processes,
            int seconds, Prepare prepare, Requests requests) throws Exception {
        Path dir = BenchConfig.workDir().resolve("handoff");
        Files.createDirectories(dir);
        Map<String, List<HandoffResult>> all = new LinkedHashMap<>();
        for (int round = 1; round <= rounds; round++) {
            for (String kind : kinds) {
                prepare.run(); // no leftover lease from an earlier round
                long[] served = new long[1];
                HandoffResult r = runRound(kind, round, processes, seconds, dir, requests, served);
                System.err.printf("hand-off %s round %d: %d acquisitions%n", kind, round, r.acquisitions());
                all.computeIfAbsent(label(kind), k -> new ArrayList<>()).add(r);
                List<String> cells = new ArrayList<>(List.of(label(kind) + " (" + round + ")",
                        Report.number(r.acquisitions() / r.seconds(), 1),
                        Report.number(r.handoffs() / r.seconds(), 1)));
                if (BenchConfig.handoffThreads() > 1) {
                    cells.add(Report.number(r.crossProcessHandoffs() / r.seconds(), 1));
                }
                cells.addAll(List.of(Report.millis(r.gapP50Nanos()), Report.millis(r.gapP99Nanos()), Report.millis(r.gapMaxNanos()),
                        String.format(Locale.ROOT, "%.1f%%–%.1f%%", 100 * r.minShare(), 100 * r.maxShare()),
                        Report.number(r.cpuPerSecond(), 3),
                        Report.number((double) served[0] / Math.max(1, r.acquisitions()), 1),
                        r.overlaps() == 0 ? "0" : "**" + r.overlaps() + "**"));
                report.row(cells.toArray(Object[]::new));
            }
        }
        return all;
    }

    private static BarChart handoffChart(Map<String, List<HandoffResult>> results, int rounds, int processes, int seconds) {
        List<String> labels = new ArrayList<>(results.keySet());
        BarChart chart = new BarChart("Redis: hand-offs per second to another process",
                String.format(Locale.ROOT, "%d JVMs blocking on one name, hold 1 ms, %d s per round; higher is better",
                        processes, seconds),
                "hand-offs / s", "%.0f", labels);
        for (int round = 0; round < rounds; round++) {
            double[] v = new double[labels.size()];
            for (int i = 0; i < labels.size(); i++) {
                HandoffResult r = results.get(labels.get(i)).get(round);
                v[i] = r.handoffs() / r.seconds();
            }
            chart.series("round " + (round + 1), v, null, null);
        }
        return chart;
    }

    private static void sleepUntil(long nanos) throws InterruptedException {
        long left = nanos - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }

    /** The table label of a contender kind: {@code redis-spring-spin} is {@code SPRING_SPIN}. */
    static String label(String kind) {
        return kind.replaceFirst("^(redis|zookeeper)-", "").replace('-', '_').toUpperCase(Locale.ROOT);
    }

    /**
     * Opens the waiting contender a child runs, with everything it needs (pool, client), all of
     * which its {@code close()} frees.
     *
     * @param kind {@code turnstile}, {@code spring} (PostgreSQL), {@code redis-turnstile},
     *     {@code redis-redisson}, {@code redis-spring-spin} or {@code redis-spring-pubsub}
     */
    static WaitingContender open(String kind) {
        switch (kind) {
            case "turnstile", "spring" -> {
                // a connection per waiting thread, up to 8 per JVM (8 JVMs of 8 connections stay within
                // PostgreSQL's 100; Turnstile's threads of one JVM take turns anyway, one of them asking the store)
                HikariDataSource pool = BenchDatabase.POSTGRESQL.openPool(Math.min(8, BenchConfig.handoffThreads() + 1),
                        "handoff-" + ProcessHandle.current().pid());
                WaitingContender c = kind.equals("turnstile") ? new TurnstileContender(pool) : new SpringContender(pool);
                return owning(c, pool);
            }
            case "redis-turnstile" -> {
                return new TurnstileContender(LockStores.open(BenchConfig.redisUrl()), true);
            }
            case "redis-redisson" -> {
                return new RedissonContender(BenchRedis.redisson(), true);
            }
            case "redis-spring-spin", "redis-spring-pubsub" -> {
                LettuceConnectionFactory factory = BenchRedis.springFactory();
                WaitingContender c = SpringContender.redis(factory, kind.endsWith("spin")
                        ? RedisLockRegistry.RedisLockType.SPIN_LOCK : RedisLockRegistry.RedisLockType.PUB_SUB_LOCK);
                return owning(c, factory::destroy);
            }
            case "zookeeper-turnstile", "zookeeper-curator" -> {
                CuratorFramework curator = CuratorFrameworkFactory.builder().connectString(BenchConfig.zookeeper())
                        .sessionTimeoutMs(10_000).connectionTimeoutMs(5_000).retryPolicy(new RetryNTimes(1, 100)).build();
                curator.start();
                WaitingContender c = kind.endsWith("turnstile")
                        ? new TurnstileContender(ZooKeeperLockStore.builder(curator).basePath("/bench-turnstile").build(), true)
                        : new CuratorMutexContender(curator);
                return owning(c, curator);
            }
            default -> throw new IllegalArgumentException("unknown hand-off contender '" + kind + "': one of "
                    + POSTGRES_KINDS + ", " + REDIS_KINDS + " or " + ZOOKEEPER_KINDS);
        }
    }

    /** A contender that also closes {@code resource} (after itself). */
    private static WaitingContender owning(WaitingContender c, AutoCloseable resource) {
        return new WaitingContender() {
            @Override
            public String id() {
                return c.id();
            }

            @Override
            public Held acquire(String lockName, java.time.Duration maxWait) throws Exception {
                return c.acquire(lockName, maxWait);
            }

            @Override
            public void close() {
                c.close();
                try {
                    resource.close();
                } catch (Exception e) {
                    System.err.println(c.id() + ": closing its resources failed: " + e);
                }
            }
        };
    }

    /**
     * One round of one contender; {@code served[0]} receives the store's requests during the
     * measured window (by {@code requests}, read when it starts and when it ends).
     */
    private static HandoffResult runRound(String which, int round, int processes, int seconds, Path dir, Requests requests,
            long[] served) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> children = new ArrayList<>();
        List<Path> logs = new ArrayList<>();
        try {
            for (int i = 0; i < processes; i++) {
                Path log = dir.resolve(which + "-" + round + "-" + i + ".log");
                Files.deleteIfExists(log);
                logs.add(log);
                ProcessBuilder pb = new ProcessBuilder(java, "-Xmx256m", "-Dbench.pgUrl=" + BenchConfig.postgresUrl(),
                        "-Dbench.redisUrl=" + BenchConfig.redisUrl(), "-Dbench.zookeeper=" + BenchConfig.zookeeper(),
                        "-Dbench.handoffThreads=" + BenchConfig.handoffThreads(), "-cp", System.getProperty("java.class.path"), HandoffChild.class.getName(), which, LOCK_NAME,
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
            // The loops run contended for the warm-up first (unrecorded): C2 keeps compiling the
            // waiting paths for tens of seconds on this 2-core machine, and would otherwise take
            // most of the CPU in the measured window, for every contender alike.
            long start = System.nanoTime() + TimeUnit.SECONDS.toNanos(BenchConfig.handoffWarmupSeconds());
            long end = start + TimeUnit.SECONDS.toNanos(seconds);
            for (Process child : children) {
                OutputStream in = child.getOutputStream();
                in.write(("GO " + start + " " + end + "\n").getBytes(StandardCharsets.UTF_8));
                in.flush();
            }
            sleepUntil(start);
            long before = requests.count();
            sleepUntil(end);
            long after = requests.count();
            served[0] = after - before;
            List<HandoffLog> parsed = new ArrayList<>();
            for (int i = 0; i < processes; i++) {
                Process child = children.get(i);
                if (!child.waitFor(seconds + BenchConfig.handoffWarmupSeconds() + 120L, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("hand-off child " + child.pid() + " did not finish");
                }
                if (child.exitValue() != 0) {
                    throw new IllegalStateException("hand-off child " + child.pid() + " exited with " + child.exitValue());
                }
                parsed.add(HandoffLog.read(logs.get(i)));
            }
            return HandoffResult.of(parsed, start, end, BenchConfig.handoffThreads());
        } finally {
            for (Process child : children) {
                if (child.isAlive()) {
                    child.destroyForcibly();
                }
            }
        }
    }
}
