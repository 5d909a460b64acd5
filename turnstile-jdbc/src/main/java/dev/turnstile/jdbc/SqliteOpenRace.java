package dev.turnstile.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Opening a SQLite file while another connection creates it, or switches it to WAL, can fail at
 * once rather than wait out the busy timeout: the journal-mode switch that every new connection
 * runs finds the file locked without calling the busy handler ({@code SQLITE_BUSY}), or finds the
 * rollback journal it was looking at removed by the other connection ({@code
 * SQLITE_IOERR_DELETE_NOENT}, {@code SQLITE_IOERR_FSTAT}). Four threads opening one fresh file
 * lost that race in 2 % of opens. So opens of one file in this JVM take turns (an open takes about
 * a millisecond, and a pool opens few), and an open that still loses the race to another process
 * is tried again, for up to the busy timeout the URL allows.
 */
final class SqliteOpenRace {
    private static final int SQLITE_BUSY = 5;
    private static final int SQLITE_LOCKED = 6;
    private static final int SQLITE_IOERR = 10;

    private static final ConcurrentHashMap<String, Object> TURNS = new ConcurrentHashMap<>();

    /** One attempt to open a connection. */
    interface Open {
        Connection open() throws SQLException;
    }

    private SqliteOpenRace() {
    }

    /** Whether {@code e} is a lost race with another connection to the same file. */
    static boolean lostRace(SQLException e) {
        int code = e.getErrorCode();
        if (code == SQLITE_BUSY || code == SQLITE_LOCKED) {
            return true;
        }
        // Only this I/O error is a race: any other (disk full, permissions) is reported at once.
        // The driver gives the primary code; the extended one is in its message.
        String message = String.valueOf(e.getMessage());
        return code == SQLITE_IOERR
                && (message.contains("SQLITE_IOERR_DELETE_NOENT") || message.contains("SQLITE_IOERR_FSTAT"));
    }

    /**
     * Opens through {@code open}, in turn with other opens of {@code file} in this JVM, and again
     * after a short pause while it loses the race and {@code budget} lasts; the last failure is
     * thrown, as is any other at once.
     */
    static Connection open(String file, Open open, Duration budget) throws SQLException {
        Object turn = TURNS.computeIfAbsent(file, f -> new Object());
        long deadline = System.nanoTime() + budget.toNanos();
        long pauseMillis = 2;
        while (true) {
            try {
                synchronized (turn) {
                    return open.open();
                }
            } catch (SQLException e) {
                if (!lostRace(e) || System.nanoTime() - deadline >= 0) {
                    throw e;
                }
                try {
                    TimeUnit.MILLISECONDS.sleep(ThreadLocalRandom.current().nextLong(1, pauseMillis + 1));
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
                pauseMillis = Math.min(50, pauseMillis * 2);
            }
        }
    }
}
