package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A deadlock met by an acquire is retried, or reported busy: never a store outage (issue 15.5). The
 * deadlock is a real one, made on the real server: the store's connection is inside a transaction
 * that holds one row when it asks for the lock's row, which another transaction holds while it asks
 * for the first row.
 */
class JdbcConflictTest {

    /**
     * Hands out plain autocommit connections, except once when armed: that connection first opens a
     * transaction holding row {@code preLocked}, as an application's transaction around the acquire
     * would. Records the SQL errors its statements raised.
     */
    static final class PreLockingDataSource implements DataSource {
        final String url;
        final String table;
        final AtomicBoolean armed = new AtomicBoolean();
        final List<SQLException> errors = new CopyOnWriteArrayList<>();
        volatile String preLocked;

        PreLockingDataSource(String url, String table) {
            this.url = url;
            this.table = table;
        }

        @Override
        public Connection getConnection() throws SQLException {
            Connection c = DriverManager.getConnection(url);
            if (!armed.compareAndSet(true, false)) {
                return c;
            }
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("SELECT name FROM " + table + " WHERE name = ? FOR UPDATE")) {
                ps.setString(1, preLocked);
                ps.executeQuery().close();
            }
            return recording(c);
        }

        private Connection recording(Connection c) {
            return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, (proxy, m, args) -> {
                Object r = invoke(c, m, args);
                if (r instanceof PreparedStatement ps) {
                    return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {PreparedStatement.class},
                            (p2, m2, a2) -> invoke(ps, m2, a2));
                }
                return r;
            });
        }

        private Object invoke(Object target, java.lang.reflect.Method m, Object[] args) throws Throwable {
            try {
                return m.invoke(target, args);
            } catch (InvocationTargetException e) {
                if (e.getCause() instanceof SQLException s) {
                    errors.add(s);
                }
                throw e.getCause();
            }
        }

        @Override public Connection getConnection(String u, String p) { throw new UnsupportedOperationException(); }
        @Override public PrintWriter getLogWriter() { return null; }
        @Override public void setLogWriter(PrintWriter out) {}
        @Override public void setLoginTimeout(int seconds) {}
        @Override public int getLoginTimeout() { return 0; }
        @Override public Logger getParentLogger() { return Logger.getGlobal(); }
        @Override public <T> T unwrap(Class<T> iface) throws SQLException { throw new SQLException("not a wrapper"); }
        @Override public boolean isWrapperFor(Class<?> iface) { return false; }
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgres", "mariadb"})
    void aDeadlockedAcquireIsRetriedAndTakesTheLock(String db) throws Exception {
        String url = JdbcLockStoreTest.url(db);
        String table = JdbcLockStoreTest.table();
        PreLockingDataSource ds = new PreLockingDataSource(url, table);
        JdbcLockStore store = JdbcLockStore.builder(ds).tableName(table).createTableIfMissing(true).build();
        // Both rows exist, their leases expired.
        for (String name : List.of("a", "b")) {
            store.tryAcquire(new AcquireRequest(name, "setup", "setup-" + name, Duration.ofMillis(10))).orElseThrow();
        }
        Thread.sleep(50);
        try (Connection other = DriverManager.getConnection(url)) {
            other.setAutoCommit(false);
            try (Statement st = other.createStatement()) {
                if (db.equals("postgres")) {
                    // The store's backend, which waits first, runs the deadlock check first (after its 1 s) and is the victim.
                    st.execute("SET deadlock_timeout = '20s'");
                } else {
                    // InnoDB rolls back the lighter transaction: make this one heavier.
                    for (int i = 0; i < 20; i++) {
                        st.executeUpdate("INSERT INTO " + table + " (name, owner, token, fence, acquired_at, expires_at) "
                                + "VALUES ('heavy-" + i + "', 'x', 'x', 1, 0, 0)");
                    }
                }
                st.executeQuery("SELECT name FROM " + table + " WHERE name = 'a' FOR UPDATE").close();
            }
            ds.preLocked = "b";
            ds.armed.set(true);
            CompletableFuture<Optional<Grant>> acquiring = CompletableFuture.supplyAsync(
                    () -> store.tryAcquire(new AcquireRequest("a", "me", "token-a", Duration.ofSeconds(30))), OWN_THREAD);
            awaitLockWait(db, url, table, acquiring);
            // This transaction now asks for the row the store's transaction holds: a deadlock.
            try (Statement st = other.createStatement()) {
                st.executeQuery("SELECT name FROM " + table + " WHERE name = 'b' FOR UPDATE").close();
            }
            other.commit(); // row 'a' is free: the retry takes the lock
            Optional<Grant> grant = acquiring.get(20, TimeUnit.SECONDS);
            assertThat(ds.errors).as("the first attempt met a real deadlock on %s", db).singleElement().satisfies(e -> {
                if (db.equals("postgres")) {
                    assertThat(e.getSQLState()).isEqualTo("40P01");
                } else {
                    assertThat(e.getErrorCode()).isEqualTo(1213);
                }
            });
            assertThat(grant).as("retried, and the lock taken").isPresent();
            assertThat(store.release("a", "token-a", Duration.ZERO)).isTrue();
        } finally {
            try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
                st.execute("DROP TABLE " + table);
            }
            store.close();
        }
    }

    @org.junit.jupiter.api.Test
    void deadlocksAndSerializationFailuresAreRetriedAndLockWaitTimeoutsAreBusy() {
        Dialect pg = (Dialect) SqlDialect.POSTGRESQL;
        Dialect maria = (Dialect) SqlDialect.MARIADB;
        Dialect h2 = (Dialect) SqlDialect.H2;
        assertThat(pg.isTransientConflict(new SQLException("deadlock detected", "40P01"))).isTrue();
        assertThat(pg.isTransientConflict(new SQLException("could not serialize access", "40001"))).isTrue();
        assertThat(pg.isTransientConflict(new SQLException("wrapped", null, new SQLException("x", "40001")))).isTrue();
        assertThat(pg.isTransientConflict(new SQLException("connection refused", "08001"))).isFalse();
        assertThat(pg.isLockWaitTimeout(new SQLException("canceling statement due to lock timeout", "55P03"))).isTrue();
        assertThat(maria.isTransientConflict(new SQLException("Deadlock found", "40001", 1213))).isTrue();
        assertThat(maria.isTransientConflict(new SQLException("Deadlock found", "HY000", 1213))).isTrue();
        assertThat(maria.isLockWaitTimeout(new SQLException("Lock wait timeout exceeded", "HY000", 1205))).isTrue();
        assertThat(maria.isTransientConflict(new SQLException("Lock wait timeout exceeded", "HY000", 1205))).isFalse();
        assertThat(h2.isTransientConflict(new SQLException("Deadlock detected", "40001", 40001))).isTrue();
    }

    /**
     * Until the store's acquire statement runs: it cannot finish while the other transaction holds
     * the lock's row, so it waits for it (or is about to).
     */
    private static void awaitLockWait(String db, String url, String table, CompletableFuture<?> acquiring) throws Exception {
        String query = db.equals("postgres")
                ? "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO " + table + "%'"
                : "SELECT count(*) FROM information_schema.processlist WHERE id <> CONNECTION_ID() AND info LIKE '%INSERT INTO " + table + "%'";
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
            while (System.nanoTime() < until && !acquiring.isDone()) {
                try (ResultSet rs = st.executeQuery(query)) {
                    rs.next();
                    if (rs.getInt(1) > 0) {
                        return;
                    }
                }
                Thread.sleep(10);
            }
        }
        throw new AssertionError("the store's acquire never waited for the row lock: " + acquiring);
    }

    private static final java.util.concurrent.Executor OWN_THREAD = task -> {
        Thread t = new Thread(task, "test-acquire");
        t.setDaemon(true);
        t.start();
    };
}
