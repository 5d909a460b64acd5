package dev.turnstile.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.ReleaseOutcome;
import dev.turnstile.Turnstile;
import dev.turnstile.jdbc.JdbcLockStore;
import dev.turnstile.redis.RedisLockStore;
import dev.turnstile.spi.LockStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * How an acquire+release of a name that exists already costs as the store fills with names (dynamic
 * names: one per customer, per tenant): the store is filled to 1 000, 100 000 and 10 000 000 names
 * (as each would be after one use: a row with its last holder's owner and token, or a key kept for
 * its fence), and each size is measured in
 * slices interleaved with slices of the same cycle on a store of 1 000 names (another table, or
 * another Redis database), so the ratio says what the size costs, beside the machine's noise of
 * the same moment. Also reports the store's size per name.
 *
 * <p>Settings: {@code -Dbench.scaleSizes=1000,100000,10000000}, {@code -Dbench.scaleStores=postgresql,mariadb,sqlite,redis},
 * and the usual slice settings of {@link BenchConfig}.
 */
public final class NameScaleBench {
    private static final LockOptions OPTIONS = LockOptions.lockAtMostFor(Duration.ofSeconds(30));
    private static final int SMALL = 1_000;
    private static final String BIG_TABLE = "bench_scale";
    private static final String SMALL_TABLE = "bench_scale_small";
    /** Redis databases of the big and the small key space: no test uses them. */
    private static final int BIG_DB = 15;
    private static final int SMALL_DB = 14;

    private NameScaleBench() {}

    /** One store filled with names {@code scale-0} … {@code scale-(n-1)}: fills, measures its size, and cleans up. */
    private interface Filled extends AutoCloseable {
        LockStore store();

        /** Makes the names {@code scale-from} … {@code scale-(to-1)} exist, as after one use each. */
        void fill(long from, long to) throws Exception;

        /** Bytes the store uses for its names now, and how that was read. */
        String sizePerName(long names) throws Exception;

        @Override
        void close() throws Exception;
    }

    /** Acquire+release of a random name among the first {@code names}: the name exists already. */
    private static final class ExistingNames implements Contender {
        private final String id;
        private final Turnstile turnstile;
        private volatile int names;

        ExistingNames(String id, LockStore store, int names) {
            this.id = id;
            this.turnstile = Turnstile.builder(store).build();
            this.names = names;
        }

        @Override
        public String id() {
            return id;
        }

        @Override
        public boolean acquireRelease(String ignored) {
            String name = "scale-" + ThreadLocalRandom.current().nextInt(names);
            Optional<Lease> lease = turnstile.tryAcquire(name, OPTIONS);
            return lease.isPresent() && lease.get().release() == ReleaseOutcome.RELEASED;
        }

        @Override
        public void close() {
            turnstile.close();
        }
    }

    /**
     * One contender's slices, each beside a slice of the reference on the same store: per-slice
     * latency ratios, means and p99s, and the failures.
     */
    private record Pairing(double[] ratio, double[] mean, double[] p99, long failures) {
        static Pairing of(SliceRunner runner, Contender reference, Contender measured, Random shuffle) throws Exception {
            SliceRunner.Paired<Contender, SliceResult> results = SliceRunner.interleavePaired(List.of(reference, measured),
                    reference, BenchConfig.slices(), TimeUnit.MILLISECONDS.toNanos(BenchConfig.warmupMillis()),
                    TimeUnit.MILLISECONDS.toNanos(BenchConfig.sliceMillis()), shuffle, (c, nanos) -> runner.run(c, 1, nanos));
            List<SliceResult> mine = results.results().get(measured);
            return new Pairing(AcquireReleaseBench.latencyRatios(mine, results.floorOf().get(measured)),
                    mine.stream().mapToDouble(SliceResult::meanNanos).toArray(),
                    mine.stream().mapToDouble(SliceResult::p99Nanos).toArray(),
                    mine.stream().mapToLong(SliceResult::failures).sum());
        }

        String ratioText() {
            return Report.ratio(Stats.median(ratio), Stats.min(ratio), Stats.max(ratio));
        }

        String failuresText() {
            return failures == 0 ? "0" : "**FAILED " + failures + "**";
        }
    }

    /**
     * Acquire+release of a name never used before (or pruned): the insert, then the two statements that
     * set its first fence above the floor (SQL), or the counter restarted at the clock (Redis).
     */
    private static final class NewNames implements Contender {
        private final Turnstile turnstile;
        private final String prefix = "new-" + Long.toHexString(System.nanoTime()) + "-";
        private long next;

        NewNames(LockStore store) {
            this.turnstile = Turnstile.builder(store).build();
        }

        @Override
        public String id() {
            return "NEW";
        }

        @Override
        public boolean acquireRelease(String ignored) {
            Optional<Lease> lease = turnstile.tryAcquire(prefix + next++, OPTIONS);
            return lease.isPresent() && lease.get().release() == ReleaseOutcome.RELEASED;
        }

        @Override
        public void close() {
            turnstile.close();
        }
    }

    /**
     * Pruning ({@code run.sh --only prune}): per store and size, the time to prune that many unused
     * names, and the cost of a name's first acquire (a new or pruned name) against an existing name's,
     * in paired slices on the same store.
     */
    private static void prune(List<Long> sizes, List<String> stores) throws Exception {
        int slices = BenchConfig.slices();
        Random shuffle = new Random(BenchConfig.seed());
        Report report = new Report("store", "unused names", "prune time", "names pruned per second", "first acquire of a name "
                + "(new or pruned), median of slices", "÷ acquire of an existing name", "failures");
        try (SliceRunner runner = new SliceRunner(1)) {
            for (String kind : stores) {
                for (long size : sizes) {
                    try (Filled filled = open(kind, true)) {
                        filled.fill(0, size);
                        Thread.sleep(5); // Redis: the filled fences lie below the server's clock
                        long t0 = System.nanoTime();
                        long pruned = ((dev.turnstile.spi.PrunesNames) filled.store()).pruneUnused(Duration.ZERO);
                        long nanos = System.nanoTime() - t0;
                        if (pruned != size) {
                            throw new IllegalStateException(kind + ": pruned " + pruned + " of " + size + " unused names");
                        }
                        filled.fill(0, SMALL);
                        ExistingNames existing = new ExistingNames("EXISTING", filled.store(), SMALL);
                        NewNames fresh = new NewNames(filled.store());
                        try {
                            Pairing p = Pairing.of(runner, existing, fresh, shuffle);
                            report.row(kind, String.format("%,d", size), TimeUnit.NANOSECONDS.toMillis(nanos) + " ms",
                                    String.format("%,.0f", size / (nanos / 1e9)), Report.micros(Stats.median(p.mean())),
                                    p.ratioText(), p.failuresText());
                            System.err.printf("%s, prune %,d: %d ms; first acquire %s%n", kind, size,
                                    TimeUnit.NANOSECONDS.toMillis(nanos), p.ratioText());
                        } finally {
                            existing.close();
                            fresh.close();
                        }
                    }
                }
            }
        }
        report.emit("Pruning unused names, and a name's first acquire", String.format(
                "1 thread. Each size: the store filled with that many unused names (as NameScaleBench fills them), "
                        + "then one pruneUnused(0) timed; then %d slices of %d ms of acquire+release of a name never used "
                        + "(the cost a pruned name pays once), each beside a slice of acquire+release of an existing name "
                        + "among 1 000 on the same store, warm-up %d ms; the ratio is per slice: median [min–max].",
                slices, BenchConfig.sliceMillis(), BenchConfig.warmupMillis()));
    }

    /**
     * Runs the benchmark and appends its table to the report.
     *
     * @param args none for the scale table, {@code prune} for the pruning table; use {@code -Dbench.*}
     *     system properties
     * @throws Exception if a store cannot be reached or filled
     */
    public static void main(String[] args) throws Exception {
        Logging.quiet();
        if (args.length > 0 && args[0].equals("prune")) {
            prune(Arrays.stream(System.getProperty("bench.pruneSizes", "10000,1000000").split(",")).map(String::trim)
                    .map(Long::parseLong).toList(),
                    Arrays.stream(System.getProperty("bench.scaleStores", "postgresql,mariadb,sqlite,redis").split(","))
                            .map(String::trim).toList());
            return;
        }
        List<Long> sizes = Arrays.stream(System.getProperty("bench.scaleSizes", "1000,100000,10000000").split(","))
                .map(String::trim).map(Long::parseLong).sorted().toList();
        List<String> stores = Arrays.stream(System.getProperty("bench.scaleStores", "postgresql,mariadb,sqlite,redis").split(","))
                .map(String::trim).toList();
        int slices = BenchConfig.slices();
        Random shuffle = new Random(BenchConfig.seed());
        Report report = new Report("store", "names in the store", "fill time", "cycle (median of slices)", "p99",
                "÷ same cycle, 1 000 names", "store size per name", "failures");
        try (SliceRunner runner = new SliceRunner(1)) {
            for (String kind : stores) {
                try (Filled small = open(kind, false); Filled big = open(kind, true)) {
                    small.fill(0, SMALL);
                    long filled = 0;
                    for (long size : sizes) {
                        long t0 = System.nanoTime();
                        big.fill(filled, size);
                        long fillMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                        filled = size;
                        ExistingNames reference = new ExistingNames("SMALL", small.store(), SMALL);
                        ExistingNames measured = new ExistingNames("BIG", big.store(), (int) Math.min(Integer.MAX_VALUE, size));
                        try {
                            Pairing p = Pairing.of(runner, reference, measured, shuffle);
                            report.row(kind, String.format("%,d", size), fillMillis + " ms", Report.micros(Stats.median(p.mean())),
                                    Report.micros(Stats.median(p.p99())), p.ratioText(), big.sizePerName(size), p.failuresText());
                            System.err.printf("%s, %,d names: %s%n", kind, size, p.ratioText());
                        } finally {
                            reference.close();
                            measured.close();
                        }
                    }
                }
            }
        }
        report.emit("Acquire + release as the store fills with names", String.format(
                "1 thread; each cycle takes and releases a random name among those in the store (the name exists: its row or "
                        + "key was kept for its fence). %d slices of %d ms per size, each beside a slice of the same cycle on a "
                        + "store of 1 000 names (PostgreSQL, MariaDB: table %s; SQLite: its own file; Redis: database %d), "
                        + "warm-up %d ms; the ratio is per slice: median [min–max]. Names are filled in bulk (SQL INSERT … SELECT, "
                        + "a Lua loop on Redis), as one use each would leave them. Sizes: PostgreSQL pg_total_relation_size, "
                        + "MariaDB information_schema data+index length after ANALYZE, SQLite page_count × page_size, Redis "
                        + "used_memory growth while filling.",
                slices, BenchConfig.sliceMillis(), SMALL_TABLE, SMALL_DB, BenchConfig.warmupMillis()));
    }

    private static Filled open(String kind, boolean big) {
        return switch (kind) {
            case "postgresql" -> new SqlFilled(BenchDatabase.POSTGRESQL, big ? BIG_TABLE : SMALL_TABLE, big);
            case "mariadb" -> new SqlFilled(BenchDatabase.MARIADB, big ? BIG_TABLE : SMALL_TABLE, big);
            case "sqlite" -> new SqlFilled(BenchDatabase.SQLITE, big ? BIG_TABLE : SMALL_TABLE, big);
            case "redis" -> new RedisFilled(big ? BIG_DB : SMALL_DB);
            default -> throw new IllegalArgumentException("bench.scaleStores: unknown store '" + kind
                    + "': give postgresql, mariadb, sqlite or redis");
        };
    }

    /** A lock table of its own, filled by INSERT … SELECT in chunks of a million rows. */
    private static final class SqlFilled implements Filled {
        private static final long CHUNK = 1_000_000;
        private static final String OWNER = "app-7f9c4d2b1-x8kqz:4127:3fa9c1";
        private static final String TOKEN = "Qm9vZ2llV29vZ2llQm9vZw";
        private final BenchDatabase db;
        private final String table;
        private final HikariDataSource pool;
        private final LockStore store;
        /** SQLite's big table lives in a file of its own (so its size is its own), deleted at the end. */
        private final boolean ownFile;

        SqlFilled(BenchDatabase db, String table, boolean big) {
            this.db = db;
            this.table = table;
            this.ownFile = db == BenchDatabase.SQLITE && big;
            this.pool = ownFile ? sqlitePool() : db.openPool(2, "scale-" + table);
            try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
                st.execute("DROP TABLE IF EXISTS " + table);
                st.execute(db.dialect().createTable(table));
            } catch (SQLException e) {
                pool.close();
                throw new IllegalStateException("cannot create " + table + " on " + db.id() + ": " + e.getMessage(), e);
            }
            this.store = JdbcLockStore.builder(pool).tableName(table).build();
        }

        private static java.nio.file.Path sqliteFile() {
            return BenchConfig.workDir().resolve("bench-scale.sqlite");
        }

        private static void deleteSqliteFiles() {
            java.nio.file.Path file = sqliteFile();
            try {
                java.nio.file.Files.deleteIfExists(file);
                java.nio.file.Files.deleteIfExists(java.nio.file.Path.of(file + "-wal"));
                java.nio.file.Files.deleteIfExists(java.nio.file.Path.of(file + "-shm"));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        private static HikariDataSource sqlitePool() {
            com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
            java.nio.file.Path file = sqliteFile();
            deleteSqliteFiles();
            config.setJdbcUrl("jdbc:sqlite:" + file + "?journal_mode=WAL&busy_timeout=10000");
            config.setMaximumPoolSize(2);
            config.setMinimumIdle(2);
            return new HikariDataSource(config);
        }

        @Override
        public LockStore store() {
            return store;
        }

        @Override
        public void fill(long from, long to) throws SQLException {
            for (long a = from; a < to; a += CHUNK) {
                long b = Math.min(to, a + CHUNK) - 1;
                // What a release leaves: the last holder's owner (host:pid:random id) and its 22-character token.
                String values = "'" + OWNER + "', '" + TOKEN + "', 1, 0, 0";
                String rows = switch (db) {
                    case POSTGRESQL -> "SELECT 'scale-' || g, " + values + " FROM generate_series(" + a + ", " + b + ") g";
                    case MARIADB -> "SELECT CONCAT('scale-', seq), " + values + " FROM seq_" + a + "_to_" + b;
                    case SQLITE -> "WITH RECURSIVE g(x) AS (SELECT " + a + " UNION ALL SELECT x + 1 FROM g WHERE x < " + b + ") "
                            + "SELECT 'scale-' || x, " + values + " FROM g";
                };
                try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
                    st.executeUpdate("INSERT INTO " + table + " (name, owner, token, fence, acquired_at, expires_at) " + rows);
                }
            }
        }

        @Override
        public String sizePerName(long names) throws SQLException {
            String sql = switch (db) {
                case POSTGRESQL -> "SELECT pg_total_relation_size('" + table + "')";
                case MARIADB -> "SELECT data_length + index_length FROM information_schema.tables "
                        + "WHERE table_schema = DATABASE() AND table_name = '" + table + "'";
                case SQLITE -> "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()";
            };
            try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
                if (db == BenchDatabase.MARIADB) {
                    st.execute("ANALYZE TABLE " + table);
                }
                try (ResultSet rs = st.executeQuery(sql)) {
                    rs.next();
                    return String.format("%.0f B", (double) rs.getLong(1) / names);
                }
            }
        }

        @Override
        public void close() throws SQLException {
            store.close();
            try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
                st.execute("DROP TABLE IF EXISTS " + table);
            } finally {
                pool.close();
                if (ownFile) {
                    deleteSqliteFiles();
                }
            }
        }
    }

    /**
     * A Redis database of its own (flushed before and after), filled with the fence keys a released
     * name leaves ({@code turnstile:{name}:fence}) by a Lua loop of 50 000 keys a call.
     */
    private static final class RedisFilled implements Filled {
        private static final String FILL = """
                local v = ARGV[3]
                for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do
                  redis.call('SET', 'turnstile:{scale-' .. i .. '}:fence', v)
                end
                return 1""";
        private final RedisClient client;
        private final StatefulRedisConnection<String, String> admin;
        private final LockStore store;
        private long grown;

        RedisFilled(int db) {
            io.lettuce.core.RedisURI uri = io.lettuce.core.RedisURI.create(BenchConfig.redisUrl());
            uri.setDatabase(db);
            this.client = RedisClient.create(uri);
            this.admin = client.connect();
            admin.sync().flushdb();
            this.store = RedisLockStore.builder(client).build();
        }

        @Override
        public LockStore store() {
            return store;
        }

        private long usedMemory() {
            for (String line : admin.sync().info("memory").split("\r?\n")) {
                if (line.startsWith("used_memory:")) {
                    return Long.parseLong(line.substring("used_memory:".length()).trim());
                }
            }
            throw new IllegalStateException("INFO memory has no used_memory");
        }

        @Override
        public void fill(long from, long to) {
            long before = usedMemory();
            String fence = Long.toString(System.currentTimeMillis() * 1000);
            for (long a = from; a < to; a += 50_000) {
                long b = Math.min(to, a + 50_000) - 1;
                admin.sync().eval(FILL, ScriptOutputType.INTEGER, new String[0], Long.toString(a), Long.toString(b), fence);
            }
            grown += usedMemory() - before;
        }

        @Override
        public String sizePerName(long names) {
            return String.format("%.0f B", (double) grown / names);
        }

        @Override
        public void close() {
            store.close();
            admin.sync().flushdb();
            admin.close();
            client.shutdown();
        }
    }
}
