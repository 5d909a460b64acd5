package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.LockInfo;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.AcquireRequest;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A commit that fails is an error, never a grant (nor a done extend or release), on the servers
 * too: the commits here fail in the real database, at commit time, after the statement itself
 * succeeded.
 */
class JdbcCommitFailureTest {
    static final Duration TTL = Duration.ofMinutes(1);

    /**
     * PostgreSQL checks a deferred constraint trigger at commit: it raises for names starting with
     * {@code refused}, for a lease stretched to 100 days or more, and for a release of a name
     * starting with {@code sticky}. Both with connections in autocommit (the commit is the end of
     * the statement) and with a pool that hands them out with autocommit off (the store commits).
     */
    @ParameterizedTest(name = "autocommit {0}")
    @ValueSource(booleans = {true, false})
    void aDeferredConstraintThatFailsAtCommitGrantsNothingOnPostgres(boolean autoCommit) throws Exception {
        String table = JdbcLockStoreTest.table();
        try (HikariDataSource pool = JdbcLockStoreTest.pool(TestDatabases.POSTGRES, autoCommit);
                JdbcLockStore store = JdbcLockStore.builder(pool).tableName(table).createTableIfMissing(true).build();
                Connection admin = DriverManager.getConnection(TestDatabases.POSTGRES);
                Statement st = admin.createStatement()) {
            store.heldLocks(); // creates the table
            st.execute("""
                    CREATE FUNCTION %1$s_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                      IF NEW.name LIKE 'refused%%' THEN RAISE EXCEPTION 'refused at commit'; END IF;
                      IF NEW.expires_at - NEW.acquired_at >= 8640000000 THEN RAISE EXCEPTION 'stretch refused at commit'; END IF;
                      IF TG_OP = 'UPDATE' AND NEW.name LIKE 'sticky%%' AND NEW.expires_at < OLD.expires_at THEN
                        RAISE EXCEPTION 'release refused at commit';
                      END IF;
                      RETURN NULL;
                    END $$""".formatted(table));
            st.execute("CREATE CONSTRAINT TRIGGER " + table + "_c AFTER INSERT OR UPDATE ON " + table
                    + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION " + table + "_at_commit()");
            try {
                assertThatThrownBy(() -> store.tryAcquire(new AcquireRequest("refused-1", "o", "t1", TTL)))
                        .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("refused at commit");
                assertThat(rows(st, table, "refused-1")).isZero();

                assertThat(store.tryAcquire(new AcquireRequest("ok", "o", "t2", TTL))).isPresent();
                assertThatThrownBy(() -> store.extend("ok", "t2", Duration.ofDays(200)))
                        .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("stretch refused at commit");
                assertThat(store.heldLocks()).singleElement().satisfies(l -> assertThat(Duration.between(l.acquiredAt(),
                        l.expiresAt())).isEqualTo(TTL));

                assertThat(store.tryAcquire(new AcquireRequest("sticky-1", "o", "t3", TTL))).isPresent();
                assertThatThrownBy(() -> store.release("sticky-1", "t3", Duration.ZERO))
                        .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("release refused at commit");
                assertThat(store.heldLocks()).extracting(LockInfo::name).containsExactly("ok", "sticky-1");
            } finally {
                st.execute("DROP TABLE " + table);
                st.execute("DROP FUNCTION " + table + "_at_commit()");
            }
        }
    }

    /**
     * A pool that hands out connections with autocommit off, and a database session killed by the
     * server between the acquire's statements and their commit (an administrator, a failover, an
     * idle-in-transaction timeout): the commit fails, the server rolls the transaction back, and the
     * acquire is an error. A later acquire of the name is fence 1: nothing was committed.
     */
    @ParameterizedTest
    @ValueSource(strings = {"postgres", "mariadb"})
    void aSessionKilledBeforeCommitGrantsNothing(String db) throws Exception {
        String url = JdbcLockStoreTest.url(db);
        String table = JdbcLockStoreTest.table();
        AtomicBoolean killAtCommit = new AtomicBoolean();
        try (HikariDataSource pool = JdbcLockStoreTest.pool(url, false);
                Connection admin = DriverManager.getConnection(url);
                Statement st = admin.createStatement();
                JdbcLockStore store = JdbcLockStore.builder(killingAtCommit(pool, admin, db, killAtCommit))
                        .tableName(table).createTableIfMissing(true).build()) {
            try {
                store.heldLocks();
                killAtCommit.set(true);
                assertThatThrownBy(() -> store.tryAcquire(new AcquireRequest("k", "o", "t1", TTL)))
                        .isInstanceOf(StoreUnavailableException.class);
                assertThat(killAtCommit).as("the kill happened").isFalse();
                assertThat(rows(st, table, "k")).isZero();
                assertThat(store.tryAcquire(new AcquireRequest("k", "o", "t2", TTL)))
                        .hasValueSatisfying(g -> assertThat(g.fence()).isEqualTo(1));
            } finally {
                st.execute("DROP TABLE " + table);
            }
        }
    }

    private static int rows(Statement st, String table, String name) throws SQLException {
        try (ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table + " WHERE name = '" + name + "'")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /** Connections whose next commit, once armed, is preceded by the server killing their session. */
    private static DataSource killingAtCommit(DataSource pool, Connection admin, String db, AtomicBoolean armed) {
        return new DataSource() {
            @Override
            public Connection getConnection() throws SQLException {
                Connection real = pool.getConnection();
                return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                        (proxy, method, args) -> {
                            if (method.getName().equals("commit") && armed.compareAndSet(true, false)) {
                                kill(real, admin, db);
                            }
                            try {
                                return method.invoke(real, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        });
            }

            @Override public Connection getConnection(String u, String p) { throw new UnsupportedOperationException(); }
            @Override public PrintWriter getLogWriter() { return null; }
            @Override public void setLogWriter(PrintWriter out) {}
            @Override public void setLoginTimeout(int seconds) {}
            @Override public int getLoginTimeout() { return 0; }
            @Override public Logger getParentLogger() { return Logger.getGlobal(); }
            @Override public <T> T unwrap(Class<T> iface) throws SQLException { throw new SQLException("not a wrapper"); }
            @Override public boolean isWrapperFor(Class<?> iface) { return false; }
        };
    }

    private static void kill(Connection victim, Connection admin, String db) throws SQLException {
        long id;
        try (Statement s = victim.createStatement();
                ResultSet rs = s.executeQuery(db.equals("postgres") ? "SELECT pg_backend_pid()" : "SELECT CONNECTION_ID()")) {
            rs.next();
            id = rs.getLong(1);
        }
        try (Statement s = admin.createStatement()) {
            s.execute(db.equals("postgres") ? "SELECT pg_terminate_backend(" + id + ")" : "KILL CONNECTION " + id);
        }
        // pg_terminate_backend signals the backend and returns: wait until the session is gone
        for (int i = 0; i < 100 && alive(admin, db, id); i++) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static boolean alive(Connection admin, String db, long id) throws SQLException {
        try (Statement s = admin.createStatement(); ResultSet rs = s.executeQuery(db.equals("postgres")
                ? "SELECT count(*) FROM pg_stat_activity WHERE pid = " + id
                : "SELECT count(*) FROM information_schema.PROCESSLIST WHERE ID = " + id)) {
            rs.next();
            return rs.getInt(1) > 0;
        }
    }
}
