package dev.turnstile.jdbc;

import dev.turnstile.spi.ReleaseWatch;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL's LISTEN/NOTIFY for forced releases: {@link JdbcLockStore#forceRelease} notifies
 * channel {@value #CHANNEL} with the table and the name, and this tells the holders of that name
 * in this process, so that a holder checks its lease and stops its work within a round trip
 * instead of at its next renewal. A notice is a reason to look, not a verdict: one sent for an
 * earlier holder can arrive after this one acquired.
 *
 * <p>A notification is only delivered to a session that listens, so one connection is held for it
 * while anyone watches (a daemon thread waits on it), and given back, with {@code UNLISTEN *}, 10 s
 * after the last watch closes. A store opened from a URL opens that connection outside its pool;
 * one built on an application's DataSource takes it from there, which is why it only does this
 * when told it may ({@link JdbcLockStore.Builder#notifyForcedReleases}): a pool of one would
 * starve the renewals.
 */
final class PgReleaseNotices {
    static final String CHANNEL = "turnstile_forced_release";
    /** NOTIFY, run after a forced release freed a lease: (table, name). */
    static final String NOTIFY = "SELECT pg_notify('" + CHANNEL + "', ? || chr(10) || ?)";

    private static final Logger log = LoggerFactory.getLogger(PgReleaseNotices.class);
    private static final int WAIT_MILLIS = 500;
    private static final long RECONNECT_PAUSE_MILLIS = 1_000;
    private static final long START_DELAY_MILLIS = 200;
    private static final long CHECK_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
    private static final int CHECK_TIMEOUT_SECONDS = 2;
    private static final long LINGER_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(10);

    private final DataSource dataSource;
    private final String table;
    private final String description;
    private final Map<String, Set<Runnable>> listeners = new ConcurrentHashMap<>();
    private @Nullable Thread thread; // guarded by this
    private long idleSince = System.nanoTime(); // guarded by this

    PgReleaseNotices(DataSource dataSource, String table, String description) {
        this.dataSource = dataSource;
        this.table = table;
        this.description = description;
    }

    /** Runs {@code listener} (on this class's thread) on forced releases of {@code name} until the watch is closed. */
    ReleaseWatch watch(String name, Runnable listener) {
        listeners.computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet()).add(listener);
        synchronized (this) {
            if (thread == null) {
                thread = new Thread(this::listen, "turnstile-pg-release-notices");
                thread.setDaemon(true);
                thread.start();
            }
        }
        return () -> {
            listeners.computeIfPresent(name, (n, set) -> {
                set.remove(listener);
                return set.isEmpty() ? null : set;
            });
            synchronized (this) {
                idleSince = System.nanoTime(); // the thread stops after a while without watches
            }
        };
    }

    /** Stops listening (the store is closing). */
    synchronized void close() {
        listeners.clear();
        if (thread != null) {
            thread.interrupt();
            thread = null;
        }
    }

    /**
     * Whether this thread listens on: it is the current one, and watches were held recently (the
     * connection and thread outlive the last watch by {@link #LINGER_NANOS}, so that short leases,
     * one after another, do not open a connection each).
     */
    private synchronized boolean mine() {
        if (thread != Thread.currentThread()) {
            return false;
        }
        if (listeners.isEmpty() && System.nanoTime() - idleSince > LINGER_NANOS) {
            thread = null;
            return false;
        }
        return true;
    }

    private void listen() {
        // Most leases end sooner than this: they cost no connection (a forced release within it is
        // found by the next renewal).
        try {
            Thread.sleep(START_DELAY_MILLIS);
        } catch (InterruptedException stop) {
            return;
        }
        synchronized (this) {
            if (thread == Thread.currentThread() && listeners.isEmpty()) {
                thread = null;
                return;
            }
        }
        while (mine()) {
            try (Connection c = dataSource.getConnection()) {
                try {
                    if (!c.getAutoCommit()) {
                        c.setAutoCommit(true); // notifications arrive between transactions
                    }
                    try (Statement st = c.createStatement()) {
                        st.execute("LISTEN " + CHANNEL);
                    }
                    PGConnection pg = c.unwrap(PGConnection.class);
                    long checkedAt = System.nanoTime();
                    while (mine()) {
                        PGNotification[] got = pg.getNotifications(WAIT_MILLIS);
                        if (got != null) {
                            for (PGNotification n : got) {
                                tell(n.getParameter());
                            }
                        }
                        // A connection that died without a word (no FIN, no RST) would wait for
                        // notices forever: ask it now and then, and open another if it does not answer.
                        if (System.nanoTime() - checkedAt > CHECK_NANOS) {
                            if (!c.isValid(CHECK_TIMEOUT_SECONDS)) {
                                throw new SQLException("the listening connection did not answer within "
                                        + CHECK_TIMEOUT_SECONDS + " s");
                            }
                            checkedAt = System.nanoTime();
                        }
                    }
                } finally {
                    // the connection goes back to the pool: it must not keep listening there
                    try (Statement st = c.createStatement()) {
                        st.execute("UNLISTEN *");
                    } catch (SQLException ignored) {
                        // a broken connection is dropped by the pool
                    }
                }
            } catch (SQLException | RuntimeException e) {
                if (!mine()) {
                    return;
                }
                // Renewals still find a forced release; only the prompt notice waits for the reconnect.
                log.debug("listening for forced releases on {} failed: {}; again in {} ms", description, e.toString(),
                        RECONNECT_PAUSE_MILLIS);
                try {
                    Thread.sleep(RECONNECT_PAUSE_MILLIS);
                } catch (InterruptedException stop) {
                    return;
                }
            }
        }
    }

    private void tell(String payload) {
        int newline = payload.indexOf('\n');
        if (newline < 0 || !bare(payload.substring(0, newline)).equalsIgnoreCase(bare(table))) {
            return; // another table's locks
        }
        for (Runnable l : listeners.getOrDefault(payload.substring(newline + 1), Set.of())) {
            try {
                l.run();
            } catch (RuntimeException e) {
                log.warn("checking a lease after a forced release of '{}' failed: {}", payload.substring(newline + 1),
                        e.toString());
            }
        }
    }

    /**
     * The table without its schema: {@code public.locks} and {@code locks} are compared alike. A
     * table of the same name in another schema then also wakes this holder, which costs a check of
     * the lease, never a wrong verdict.
     */
    private static String bare(String table) {
        return table.substring(table.lastIndexOf('.') + 1);
    }

    /** Sends the notice for a forced release of {@code name} (on the connection that freed it). */
    static void notify(Connection c, String table, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(NOTIFY)) {
            ps.setString(1, table);
            ps.setString(2, name);
            ps.execute();
        }
    }
}
