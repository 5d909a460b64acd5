package dev.turnstile.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.jdbc.SqlFences;
import dev.turnstile.redis.RedisFences;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * What fencing a write costs: the same write with and without the fence, side by side in
 * interleaved slices, on 1 thread. On SQL: an auto-commit {@code UPDATE} of one row against
 * {@code SqlFences.updateRow} (the fence column in the same statement), and a transaction
 * ({@code UPDATE}, commit) against the same transaction opened by {@code SqlFences.check}. On
 * Redis: {@code SET} against {@code RedisFences.set}. Every write carries a higher fence than the
 * last, so every fenced write is admitted (the refusal is not the path measured).
 */
public final class FencedWriteBench {
    private static final String TABLE = "bench_fenced_rows";
    private static final String FENCES = "bench_fences";
    private static final AtomicLong FENCE = new AtomicLong(1);

    private FencedWriteBench() {}

    /**
     * Runs the benchmark and appends its table to the report.
     *
     * @param args ignored; use {@code -Dbench.*} system properties ({@code bench.dbs} picks the SQL databases)
     * @throws Exception if a store cannot be reached or set up
     */
    public static void main(String[] args) throws Exception {
        Logging.quiet();
        int slices = BenchConfig.slices();
        long sliceNanos = TimeUnit.MILLISECONDS.toNanos(BenchConfig.sliceMillis());
        long warmupNanos = TimeUnit.MILLISECONDS.toNanos(BenchConfig.warmupMillis());
        Random shuffle = new Random(BenchConfig.seed());
        Report report = AcquireReleaseBench.newReport("store");
        SqlFences fences = SqlFences.create().withTable(FENCES);

        for (BenchDatabase db : BenchConfig.databases()) {
            try (HikariDataSource pool = db.openPool(4, "bench-fenced-" + db.id()); SliceRunner runner = new SliceRunner(1)) {
                prepare(pool, fences);
                Set<String> rows = ConcurrentHashMap.newKeySet();
                OneCall update = new OneCall("UPDATE", key -> autoCommit(pool, rows, key, c -> update(c, key)));
                OneCall fencedRow = new OneCall("FENCED_ROW", key -> autoCommit(pool, rows, key,
                        c -> fences.updateRow(c, TABLE, "id", key, FENCE.incrementAndGet(), "val = ?", FENCE.get()) == 1));
                OneCall transaction = new OneCall("TRANSACTION", key -> inTransaction(pool, rows, key, c -> update(c, key)));
                OneCall fencedTransaction = new OneCall("FENCED_TRANSACTION", key -> inTransaction(pool, rows, key, c -> {
                    fences.check(c, key, FENCE.incrementAndGet());
                    return update(c, key);
                }));
                for (List<Contender> pair : List.<List<Contender>>of(List.of(update, fencedRow), List.of(transaction, fencedTransaction))) {
                    SliceRunner.Paired<Contender, SliceResult> results = AcquireReleaseBench.measure(runner, pair, 1, slices,
                            warmupNanos, sliceNanos, shuffle);
                    System.err.printf("%s %s: %d slices done%n", db.id(), pair.get(1).id(), slices);
                    AcquireReleaseBench.addRows(report, db.id(), 1, results, pair.get(0));
                }
            }
        }

        RedisClient client = BenchRedis.lettuce();
        try (StatefulRedisConnection<String, String> connection = client.connect(); SliceRunner runner = new SliceRunner(1)) {
            RedisCommands<String, String> redis = connection.sync();
            RedisFences redisFences = RedisFences.over(redis);
            OneCall set = new OneCall("SET", key -> "OK".equals(redis.set(BenchRedis.KEY_PREFIX + key, "v")));
            OneCall fencedSet = new OneCall("FENCED_SET", key -> {
                redisFences.set(BenchRedis.KEY_PREFIX + key, "v", FENCE.incrementAndGet());
                return true;
            });
            List<Contender> pair = List.of(set, fencedSet);
            SliceRunner.Paired<Contender, SliceResult> results = AcquireReleaseBench.measure(runner, pair, 1, slices,
                    warmupNanos, sliceNanos, shuffle);
            System.err.printf("redis FENCED_SET: %d slices done%n", slices);
            AcquireReleaseBench.addRows(report, "redis", 1, results, set);
            BenchRedis.deleteBenchKeys(redis);
            List<String> fenceKeys = redis.keys("{" + BenchRedis.KEY_PREFIX + "*");
            if (!fenceKeys.isEmpty()) {
                redis.del(fenceKeys.toArray(String[]::new));
            }
        } finally {
            client.shutdown();
        }
        report.emit("Fenced writes: the same write with and without its fence, 1 thread", String.format(
                "%d slices of %d ms per path, each beside a slice of the same write unfenced (the row's first contender: "
                        + "UPDATE, TRANSACTION, SET; pairs in shuffled order, alternating which goes first); warm-up %d ms. "
                        + "Latency is one write of one row (SQL: a connection from a HikariCP pool, an UPDATE by primary key; "
                        + "TRANSACTION: auto-commit off, the UPDATE, commit; FENCED_TRANSACTION adds SqlFences.check first) or "
                        + "one SET over one Lettuce connection. Ratios are per slice against the unfenced slice beside it: "
                        + "median [min–max].",
                slices, BenchConfig.sliceMillis(), BenchConfig.warmupMillis()));
    }

    private interface SqlWrite {
        boolean run(Connection c) throws SQLException;
    }

    private static void prepare(DataSource ds, SqlFences fences) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + TABLE);
            st.execute("DROP TABLE IF EXISTS " + FENCES);
            st.execute("CREATE TABLE " + TABLE + " (id VARCHAR(255) NOT NULL PRIMARY KEY, val BIGINT NOT NULL, "
                    + "turnstile_fence BIGINT NOT NULL DEFAULT 0)");
            fences.createTable(c);
        }
    }

    private static boolean update(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + TABLE + " SET val = ? WHERE id = ?")) {
            ps.setLong(1, FENCE.incrementAndGet());
            ps.setString(2, key);
            return ps.executeUpdate() == 1;
        }
    }

    /** The row of a key, inserted on its first write (outside the timed path after warm-up). */
    private static void ensureRow(Connection c, Set<String> rows, String key) throws SQLException {
        if (rows.add(key)) {
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + TABLE + " (id, val) VALUES (?, 0)")) {
                ps.setString(1, key);
                ps.executeUpdate();
            }
        }
    }

    private static boolean autoCommit(DataSource ds, Set<String> rows, String key, SqlWrite write) throws SQLException {
        try (Connection c = ds.getConnection()) {
            ensureRow(c, rows, key);
            return write.run(c);
        }
    }

    private static boolean inTransaction(DataSource ds, Set<String> rows, String key, SqlWrite write) throws SQLException {
        try (Connection c = ds.getConnection()) {
            ensureRow(c, rows, key);
            c.setAutoCommit(false);
            try {
                boolean ok = write.run(c);
                c.commit();
                return ok;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }
}
