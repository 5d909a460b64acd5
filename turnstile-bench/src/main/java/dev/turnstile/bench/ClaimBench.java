package dev.turnstile.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.TaskClaimer;
import dev.turnstile.jdbc.JdbcClaimStore;
import dev.turnstile.jdbc.SqlDialect;
import dev.turnstile.mongo.MongoClaimStore;
import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import org.bson.Document;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Work claiming: Turnstile's {@link TaskClaimer} against the raw claiming statement over plain JDBC
 * on the same pool (the floor), in interleaved pairs of slices (each pair, and each alternating
 * slice, checked by {@link QuietGate} and run again if other processes used the CPU meanwhile); then the cost of one claim as the
 * table grows to 1 million rows with 1 % due, and the {@code EXPLAIN} of the claiming statement.
 *
 * <p>Every cycle claims one task. The lock timeout is 1 ms, so a claimed task is due again a
 * millisecond later and the due set never runs dry: the cycle is the claim alone, nothing else.
 *
 * <p>System properties: {@code bench.claim.dbs} ({@code postgresql,mariadb}; {@code mongodb} too), {@code bench.claim.threads}
 * ({@code 1,8}), {@code bench.claim.slices} (8), {@code bench.claim.sliceMs} (1000),
 * {@code bench.claim.sizes} ({@code 10000,100000,1000000}), {@code bench.claim.report}
 * ({@code turnstile-bench/target/claim-bench.md}), {@code bench.mariadbUrl}, {@code bench.claim.mongoUrl}
 * (default: mongo-java-server started in a JVM of its own), {@code bench.claim.mongoTasks} (2000).
 *
 * <p>A benchmark program, not published: past 400 lines by one workload on five stores and their peers.
 */
public final class ClaimBench {
    private static final Duration TIMEOUT = Duration.ofMillis(1);
    private static final ClaimFilter DUE = ClaimFilter.where("phase", "Due");
    /** Cycles that failed (the shared machine's database was restarted by another job); such slices are redone. */
    private static final AtomicLong ERRORS = new AtomicLong();
    private final StringBuilder report = new StringBuilder();

    private ClaimBench() {}

    /**
     * Runs the claiming benchmarks and writes the Markdown report.
     *
     * @param args unused
     * @throws Exception on database errors
     */
    public static void main(String[] args) throws Exception {
        new ClaimBench().run();
    }

    private void run() throws Exception {
        List<String> dbs = List.of(System.getProperty("bench.claim.dbs", "postgresql,mariadb").split(","));
        int[] threads = ints(System.getProperty("bench.claim.threads", "1,8"));
        int slices = Integer.getInteger("bench.claim.slices", 8);
        long sliceMs = Integer.getInteger("bench.claim.sliceMs", 1000);
        long[] sizes = longs(System.getProperty("bench.claim.sizes", "10000,100000,1000000"));
        line("# Claiming benchmark, " + Instant.now());
        line("");
        line("Host: " + Runtime.getRuntime().availableProcessors() + " cores; lock timeout 1 ms (a claimed task is due "
                + "again 1 ms later); each cycle claims one task. Ratio = Turnstile's time per claim ÷ the floor's "
                + "(1.00 = at the floor; above 1 = slower): median [min–max] over " + slices + " pairs of " + sliceMs
                + " ms slices (floor claims/s ÷ Turnstile claims/s of the neighbouring slice), and over " + slices
                + " slices of " + sliceMs + " ms in which every thread alternates one Turnstile claim and one raw claim.");
        for (String db : dbs) {
            if (db.equals("mongodb")) {
                mongo(threads, slices, sliceMs);
                continue;
            }
            String url = url(db);
            SqlDialect dialect = SqlDialect.fromJdbcUrl(url);
            try (HikariDataSource pool = pool(url, 8)) {
                ClaimTable table = ClaimTable.builder("bench_claim_" + UUID.randomUUID().toString().substring(0, 8)).build();
                try {
                    create(pool, dialect, table);
                    fill(pool, dialect, table, 0, 20_000, 1);
                    line("");
                    line("## " + db + ": throughput, 20 000 tasks all due");
                    line("");
                    line("| threads | batch | Turnstile claims/s | floor claims/s | ratio, pairs of slices | ratio, alternating (last slice's µs per claim) |");
                    line("| --- | --- | --- | --- | --- | --- |");
                    for (int t : threads) {
                        throughput(pool, dialect, table, t, 1, slices, sliceMs);
                    }
                    throughput(pool, dialect, table, threads[threads.length - 1], 20, slices, sliceMs);
                    line("");
                    line(QuietGate.summaryAndReset());
                    scaling(pool, dialect, table, sizes, sliceMs);
                } finally {
                    drop(pool, table);
                }
            }
        }
        Path out = Path.of(System.getProperty("bench.claim.report", "turnstile-bench/target/claim-bench.md"));
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, report.toString());
        System.out.println("report: " + out);
    }

    /** One claimer, one raw floor, on the same pool; pairs of slices in a shuffled order. */
    private void throughput(HikariDataSource pool, SqlDialect dialect, ClaimTable table, int threads, int batch, int slices,
            long sliceMs) throws Exception {
        try (TaskClaimer claimer = TaskClaimer.builder(JdbcClaimStore.builder(pool, table).build()).lockTimeout(TIMEOUT).build()) {
            throughput(() -> claimer.claim(DUE, batch).size(), floor(pool, dialect, table, batch), threads, batch, slices, sliceMs);
        }
    }

    /** Turnstile against its floor on N threads: pairs of slices in a shuffled order, then alternating claims. */
    private void throughput(Cycle turnstile, Cycle floor, int threads, int batch, int slices, long sliceMs) throws Exception {
        {
            measure(turnstile, threads, 2000);
            measure(floor, threads, 2000);
            Random shuffle = new Random(42);
            List<Double> ratios = new ArrayList<>();
            double sumT = 0;
            double sumF = 0;
            for (int s = 0; s < slices; s++) {
                double t;
                double f;
                boolean turnstileFirst = shuffle.nextBoolean();
                for (int attempt = 0; ; attempt++) {
                    QuietGate.Sample before = QuietGate.sample();
                    if (turnstileFirst) {
                        t = measure(turnstile, threads, sliceMs);
                        f = measure(floor, threads, sliceMs);
                    } else {
                        f = measure(floor, threads, sliceMs);
                        t = measure(turnstile, threads, sliceMs);
                    }
                    if (QuietGate.judge(QuietGate.foreignCores(before), attempt)) {
                        break;
                    }
                }
                sumT += t;
                sumF += f;
                ratios.add(f / t);
            }
            Collections.sort(ratios);
            // Finest interleaving: every thread alternates one Turnstile claim and one raw claim and
            // times each, so load swings of a shared machine hit both alike.
            List<Double> alt = new ArrayList<>();
            double[] last = null;
            for (int s = 0; s < slices; s++) {
                for (int attempt = 0; ; attempt++) {
                    QuietGate.Sample before = QuietGate.sample();
                    last = alternate(turnstile, floor, threads, sliceMs);
                    if (QuietGate.judge(QuietGate.foreignCores(before), attempt)) {
                        break;
                    }
                }
                alt.add(last[0] / last[1]);
            }
            Collections.sort(alt);
            line(String.format(Locale.ROOT, "| %d | %d | %.0f | %.0f | %.3f [%.3f–%.3f] | %.3f [%.3f–%.3f] (%.0f µs vs %.0f µs) |",
                    threads, batch, sumT / slices, sumF / slices, median(ratios), ratios.get(0), ratios.get(ratios.size() - 1),
                    median(alt), alt.get(0), alt.get(alt.size() - 1), last[0], last[1]));
        }
    }

    /**
     * MongoDB: {@code MongoClaimStore} against the raw {@code findOneAndUpdate} it sends
     * ({@link MongoClaimStore#claimCommand}), on the same collection object of one client, so the
     * same write concern. The server is {@code bench.claim.mongoUrl}, or else mongo-java-server
     * (in-memory) started in a JVM of its own. That server ignores secondary indexes, so every claim
     * scans the collection: the task count is small ({@code bench.claim.mongoTasks}, 2 000) and there
     * is no growth table.
     */
    private void mongo(int[] threads, int slices, long sliceMs) throws Exception {
        String url = System.getProperty("bench.claim.mongoUrl");
        Process server = null;
        String serverName = "the server at bench.claim.mongoUrl";
        if (url == null) {
            int port;
            try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
                port = s.getLocalPort();
            }
            server = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m", "-cp",
                    System.getProperty("java.class.path"), MongoBenchServer.class.getName(), Integer.toString(port))
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            url = "mongodb://127.0.0.1:" + port + "/bench";
            serverName = "mongo-java-server " + RedisBench.version(de.bwaldvogel.mongo.MongoServer.class)
                    + " (in-memory backend, a JVM of its own; not a real mongod)";
        }
        int tasks = Integer.getInteger("bench.claim.mongoTasks", 2000);
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder().applyConnectionString(new ConnectionString(url))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(30, java.util.concurrent.TimeUnit.SECONDS)).build())) {
            String database = new ConnectionString(url).getDatabase();
            ClaimTable table = ClaimTable.builder("bench_claim_" + UUID.randomUUID().toString().substring(0, 8)).build();
            MongoCollection<Document> tasksCollection = client.getDatabase(database).getCollection(table.table())
                    .withWriteConcern(WriteConcern.MAJORITY);
            try {
                MongoClaimStore store = MongoClaimStore.builder(client, database, table).createIndexIfMissing(true).build();
                List<Document> docs = new ArrayList<>();
                for (int i = 0; i < tasks; i++) {
                    docs.add(new Document("id", "task" + i).append("phase", "Due").append("locked_at", new java.util.Date(0))
                            .append("updated_at", new java.util.Date(i)).append("claim_version", 0L));
                }
                tasksCollection.insertMany(docs);
                Document cmd = MongoClaimStore.claimCommand(table, DUE, TIMEOUT);
                FindOneAndUpdateOptions options = new FindOneAndUpdateOptions().sort(cmd.get("sort", Document.class))
                        .projection(cmd.get("fields", Document.class)).returnDocument(ReturnDocument.AFTER);
                Document query = cmd.get("query", Document.class);
                Document update = cmd.get("update", Document.class);
                Cycle floor = () -> tasksCollection.findOneAndUpdate(query, update, options) != null ? 1 : 0;
                line("");
                line(String.format(Locale.ROOT, "## mongodb: throughput, %,d tasks all due", tasks));
                line("");
                line("Server: " + serverName + "; driver " + RedisBench.version(MongoClient.class)
                        + ", one MongoClient; write concern majority on both sides. Floor: the raw findOneAndUpdate of "
                        + "MongoClaimStore.claimCommand on the same collection object.");
                line("");
                line("| threads | batch | Turnstile claims/s | floor claims/s | ratio, pairs of slices | ratio, alternating (last slice's µs per claim) |");
                line("| --- | --- | --- | --- | --- | --- |");
                try (TaskClaimer claimer = TaskClaimer.builder(store).lockTimeout(TIMEOUT).build()) {
                    for (int t : threads) {
                        throughput(() -> claimer.claim(DUE, 1).size(), floor, t, 1, slices, sliceMs);
                    }
                }
                line("");
                line(QuietGate.summaryAndReset());
            } finally {
                tasksCollection.drop();
            }
        } finally {
            if (server != null) {
                server.destroyForcibly().waitFor();
            }
        }
    }

    /** Claim cost as the table grows, with 1 % of the rows due; EXPLAIN at the largest size. */
    private void scaling(HikariDataSource pool, SqlDialect dialect, ClaimTable table, long[] sizes, long sliceMs)
            throws Exception {
        line("");
        line("### " + dialect.id() + ": one claim as the table grows (1 % due, 1 thread, alternating claims, 3 slices)");
        line("");
        line("| rows | due | Turnstile µs/claim | floor µs/claim | ratio |");
        line("| --- | --- | --- | --- | --- |");
        // Start over: 1 % due (locked_at = 0), 99 % claimed far into the future (not due).
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.executeUpdate("DELETE FROM " + table.table());
        }
        long rows = 0;
        try (TaskClaimer claimer = TaskClaimer.builder(JdbcClaimStore.builder(pool, table).build()).lockTimeout(TIMEOUT).build()) {
            Cycle turnstile = () -> claimer.claimNext(DUE).isPresent() ? 1 : 0;
            Cycle floor = floor(pool, dialect, table, 1);
            for (long size : sizes) {
                fill(pool, dialect, table, rows, size, 100);
                rows = size;
                analyze(pool, dialect, table);
                alternate(turnstile, floor, 1, 1000);
                double t = 0;
                double f = 0;
                for (int s = 0; s < 3; s++) {
                    double[] r = alternate(turnstile, floor, 1, sliceMs);
                    t += r[0];
                    f += r[1];
                }
                line(String.format(Locale.ROOT, "| %,d | %,d | %.0f | %.0f | %.3f |", size, size / 100, t / 3, f / 3, t / f));
            }
        }
        line("");
        line("EXPLAIN of the claiming statement at " + String.format(Locale.ROOT, "%,d", rows) + " rows:");
        line("");
        line("```");
        line(explain(pool, dialect, table));
        line("```");
    }

    @FunctionalInterface
    private interface Cycle {
        /** Returns how many tasks the cycle claimed. */
        int run() throws Exception;
    }

    /** Runs cycles on N threads for a while; returns successful cycles per second. */
    private static double measure(Cycle cycle, int threads, long millis) throws Exception {
        for (int attempt = 1; ; attempt++) {
            long before = ERRORS.get();
            double r = measureOnce(cycle, threads, millis);
            if (ERRORS.get() == before || attempt == 5) {
                return r;
            }
            System.err.println("slice had errors; redoing it");
        }
    }

    private static double measureOnce(Cycle cycle, int threads, long millis) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            AtomicLong ok = new AtomicLong();
            AtomicLong empty = new AtomicLong();
            CountDownLatch start = new CountDownLatch(1);
            long[] window = new long[2];
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                fs.add(pool.submit(() -> {
                    start.await();
                    long end = window[1];
                    while (System.nanoTime() < end) {
                        int n;
                        try {
                            n = cycle.run();
                        } catch (Exception e) {
                            ERRORS.incrementAndGet(); // a database restarted under us: the slice is redone
                            java.util.concurrent.locks.LockSupport.parkNanos(50_000_000);
                            continue;
                        }
                        if (n > 0) {
                            ok.addAndGet(n);
                        } else {
                            empty.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            window[0] = System.nanoTime();
            window[1] = window[0] + millis * 1_000_000;
            start.countDown();
            for (Future<?> f : fs) {
                f.get();
            }
            return ok.get() / ((System.nanoTime() - window[0]) / 1e9);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Each thread alternates one cycle of {@code a} and one of {@code b} for a while, timing each;
     * returns the mean µs per claimed task of each.
     */
    private static double[] alternate(Cycle a, Cycle b, int threads, long millis) throws Exception {
        for (int attempt = 1; ; attempt++) {
            long before = ERRORS.get();
            double[] r = alternateOnce(a, b, threads, millis);
            if (ERRORS.get() == before || attempt == 5) {
                return r;
            }
            System.err.println("slice had errors; redoing it");
        }
    }

    private static double[] alternateOnce(Cycle a, Cycle b, int threads, long millis) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            AtomicLong[] nanos = {new AtomicLong(), new AtomicLong()};
            AtomicLong[] count = {new AtomicLong(), new AtomicLong()};
            long end = System.nanoTime() + millis * 1_000_000;
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                boolean aFirst = i % 2 == 0;
                fs.add(pool.submit(() -> {
                    boolean turnA = aFirst;
                    while (System.nanoTime() < end) {
                        int k = turnA ? 0 : 1;
                        long t0 = System.nanoTime();
                        int n;
                        try {
                            n = (turnA ? a : b).run();
                        } catch (Exception e) {
                            ERRORS.incrementAndGet();
                            java.util.concurrent.locks.LockSupport.parkNanos(50_000_000);
                            continue;
                        }
                        long t = System.nanoTime() - t0;
                        if (n > 0) {
                            nanos[k].addAndGet(t);
                            count[k].addAndGet(n);
                        }
                        turnA = !turnA;
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
            return new double[] {nanos[0].get() / 1e3 / Math.max(1, count[0].get()), nanos[1].get() / 1e3 / Math.max(1, count[1].get())};
        } finally {
            pool.shutdownNow();
        }
    }

    /** The raw claim over plain JDBC: the very statement(s) the store runs, nothing around them. */
    private static Cycle floor(HikariDataSource pool, SqlDialect dialect, ClaimTable table, int batch) {
        String sql = JdbcClaimStore.claimStatement(dialect, table, DUE);
        if (dialect == SqlDialect.MARIADB) {
            String[] marks = new String[batch + 1];
            for (int n = 1; n <= batch; n++) {
                marks[n] = "UPDATE " + table.table() + " SET locked_at = ?, claim_version = claim_version + 1 WHERE id IN ("
                        + String.join(", ", Collections.nCopies(n, "?")) + ")";
            }
            return () -> {
                try (Connection c = pool.getConnection()) {
                    c.setAutoCommit(false);
                    try {
                        List<Object> keys = new ArrayList<>(batch);
                        long now = 0;
                        try (PreparedStatement ps = c.prepareStatement(sql)) {
                            ps.setString(1, "Due");
                            ps.setLong(2, TIMEOUT.toMillis());
                            ps.setInt(3, batch);
                            try (ResultSet rs = ps.executeQuery()) {
                                while (rs.next()) {
                                    keys.add(rs.getObject(1));
                                    now = rs.getLong(3);
                                }
                            }
                        }
                        if (!keys.isEmpty()) {
                            try (PreparedStatement ps = c.prepareStatement(marks[keys.size()])) {
                                ps.setLong(1, now);
                                for (int k = 0; k < keys.size(); k++) {
                                    ps.setObject(k + 2, keys.get(k));
                                }
                                ps.executeUpdate();
                            }
                        }
                        c.commit();
                        return keys.size();
                    } finally {
                        c.setAutoCommit(true);
                    }
                }
            };
        }
        return () -> {
            try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, "Due");
                ps.setLong(2, TIMEOUT.toMillis());
                ps.setInt(3, batch);
                int n = 0;
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        n++;
                    }
                }
                return n;
            }
        };
    }

    private static String explain(HikariDataSource pool, SqlDialect dialect, ClaimTable table) throws SQLException {
        String sql = JdbcClaimStore.claimStatement(dialect, table, DUE).replaceFirst("\\?", "'Due'")
                .replaceFirst("\\?", Long.toString(TIMEOUT.toMillis())).replaceFirst("\\?", "1");
        String explain = dialect == SqlDialect.POSTGRESQL ? "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + sql : "ANALYZE " + sql;
        StringBuilder b = new StringBuilder(sql).append("\n\n");
        try (Connection c = pool.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(explain)) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<String> cells = new ArrayList<>();
                for (int i = 1; i <= n; i++) {
                    cells.add(rs.getMetaData().getColumnLabel(i) + "=" + rs.getString(i));
                }
                b.append(n == 1 ? rs.getString(1) : String.join(" ", cells)).append('\n');
            }
        }
        return b.toString().strip();
    }

    private static void create(HikariDataSource pool, SqlDialect dialect, ClaimTable table) throws SQLException {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            for (String ddl : JdbcClaimStore.createTable(dialect, table).split(";\\s*\n")) {
                String s = ddl.lines().filter(l -> !l.strip().startsWith("--")).reduce("", (a, b) -> a + b + "\n");
                if (!s.isBlank()) {
                    st.execute(s);
                }
            }
        }
    }

    /** Adds rows from+1..to; one in {@code dueEvery} is due, the others are claimed far into the future. */
    private static void fill(HikariDataSource pool, SqlDialect dialect, ClaimTable table, long from, long to, int dueEvery)
            throws SQLException {
        String series = dialect == SqlDialect.POSTGRESQL
                ? "SELECT g AS n FROM generate_series(" + (from + 1) + ", " + to + ") g"
                : "SELECT seq AS n FROM seq_" + (from + 1) + "_to_" + to;
        String farFuture = Long.toString(4_000_000_000_000L);
        String id = dialect == SqlDialect.POSTGRESQL ? "'task' || n" : "CONCAT('task', n)";
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.executeUpdate("INSERT INTO " + table.table() + " (id, phase, locked_at, updated_at, claim_version) SELECT "
                    + id + ", 'Due', CASE WHEN n % " + dueEvery + " = 0 THEN 0 ELSE " + farFuture + " END, n, 0 FROM ("
                    + series + ") s");
        }
    }

    private static void analyze(HikariDataSource pool, SqlDialect dialect, ClaimTable table) throws SQLException {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.execute((dialect == SqlDialect.POSTGRESQL ? "VACUUM ANALYZE " : "ANALYZE TABLE ") + table.table());
        }
    }

    private static void drop(HikariDataSource pool, ClaimTable table) throws SQLException {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + table.table());
        }
    }

    private static String url(String db) {
        return switch (db) {
            case "postgresql" -> BenchConfig.postgresUrl();
            case "mariadb" -> System.getProperty("bench.mariadbUrl", "jdbc:mariadb://127.0.0.1:3306/test?user=root");
            default -> throw new IllegalArgumentException("bench.claim.dbs takes postgresql and mariadb, not " + db);
        };
    }

    private static HikariDataSource pool(String url, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        config.setPoolName("claim-bench");
        return new HikariDataSource(config);
    }

    private static double median(List<Double> sorted) {
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private void line(String s) {
        report.append(s).append('\n');
        System.out.println(s);
    }

    private static int[] ints(String csv) {
        return java.util.Arrays.stream(csv.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    private static long[] longs(String csv) {
        return java.util.Arrays.stream(csv.split(",")).mapToLong(Long::parseLong).toArray();
    }

}
