package dev.turnstile.jdbc;

import dev.turnstile.spi.Grant;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Pruning unused names from a lock table without letting any name's fence go back: the algorithm,
 * in one place (the SQL is in {@link Dialect}).
 *
 * <p>One row of the table, {@link Dialect#FENCE_FLOOR_ROW}, holds the <em>floor</em>: at least the
 * highest fence of every row ever pruned. A prune deletes rows and raises the floor to their highest
 * fence <em>in the same transaction</em>. A new row is inserted with fence 0 ("not set"), and once
 * that insert has committed its holder reads the floor in a new statement and sets the fence to
 * floor + 1. The order is what makes it safe: a deleted row's name can be inserted again only after
 * the deleting transaction committed (the insert meets the deleted row's lock and waits, or meets no
 * row because the delete committed before), so the floor read after the insert already has that
 * row's fence in it. Nothing rests on clocks or on how long a statement took, which is why an
 * earlier design (a first fence taken from the database's clock, withdrawn) was not kept: there, an
 * acquire that read the clock and then waited behind the prune's lock could insert a fence below the
 * pruned one.
 *
 * <p>A holder that dies between its insert and setting the fence leaves a row at fence 0; the next
 * holder takes it over with the fence still 0 (the acquire statements keep 0 on takeover) and sets it
 * then. No holder is ever handed fence 0.
 */
final class NamePruning {
    /** Names deleted per transaction: short transactions, so acquires wait little behind a prune. */
    static final int BATCH = 500;

    private NamePruning() {}

    /**
     * Sets the first fence of a row this holder inserted (or took over) at fence 0, above the floor.
     * Runs after the acquire committed, on its own statements, so that the floor read sees every
     * prune that committed before the insert.
     *
     * @return the grant with its fence, or empty if the row is no longer this holder's at fence 0 (its
     *     lease ended and another holder took it, or it was pruned: the lease is lost, so busy)
     */
    static Optional<Grant> setFirstFence(Connection c, Dialect d, Dialect.Statements sql, String name, String token, Grant unset)
            throws SQLException {
        int isolation = readCommitted(c, d);
        Exception failure = null;
        try {
            return setFirstFenceAtReadCommitted(c, sql, name, token, unset);
        } catch (SQLException | RuntimeException e) {
            // rolled back before the level is restored: a driver refuses (PostgreSQL) or commits (H2) a
            // change of level inside a transaction
            JdbcCalls.rollbackQuietly(c);
            failure = e;
            throw e;
        } finally {
            restore(c, isolation, failure);
        }
    }

    private static Optional<Grant> setFirstFenceAtReadCommitted(Connection c, Dialect.Statements sql, String name, String token,
            Grant unset) throws SQLException {
        long floor = 0;
        try (PreparedStatement ps = c.prepareStatement(sql.floor())) {
            ps.setString(1, Dialect.FENCE_FLOOR_ROW);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    floor = rs.getLong(1);
                }
            }
        }
        if (floor == Long.MAX_VALUE) {
            throw new SQLException("the fence floor row of the lock table holds the largest fence there is (" + floor
                    + "), so no new name can get a fence above it: a row with that fence was pruned (written by hand?)", "22003");
        }
        long fence = floor + 1;
        int rows;
        try (PreparedStatement ps = c.prepareStatement(sql.firstFence())) {
            ps.setLong(1, fence);
            ps.setString(2, name);
            ps.setString(3, token);
            rows = ps.executeUpdate();
        }
        JdbcCalls.commitIfNeeded(c);
        return rows == 1 ? Optional.of(new Grant(fence, unset.acquiredAt(), unset.expiresAt())) : Optional.empty();
    }

    /** Creates the floor row if it is missing, in a statement of its own (a second prune at once is harmless). */
    static void ensureFloorRow(Connection c, Dialect d, String table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(d.sql(d.insertFloorSql(), table))) {
            ps.setString(1, Dialect.FENCE_FLOOR_ROW);
            ps.executeUpdate();
            JdbcCalls.commitIfNeeded(c);
        } catch (SQLException e) {
            JdbcCalls.rollbackQuietly(c);
            if (!d.isLostInsertRace(e)) {
                throw e;
            }
        }
    }

    /**
     * One batch, in one transaction: read up to {@link #BATCH} prunable rows, delete those still
     * prunable whose fence is at most the highest read, raise the floor to that highest, commit.
     *
     * @return {names read, rows deleted}
     */
    static long[] pruneBatch(Connection c, Dialect d, String table, long unusedForMillis) throws SQLException {
        int isolation = readCommitted(c, d);
        boolean auto;
        try {
            auto = c.getAutoCommit();
            c.setAutoCommit(false);
        } catch (SQLException | RuntimeException e) {
            restore(c, isolation, e);
            throw e;
        }
        Exception failure = null;
        try {
            String deleteReturning = d.pruneReturningSql(BATCH);
            if (deleteReturning != null) {
                long[] done = deleteReturning(c, d.sql(deleteReturning, table), unusedForMillis);
                if (done[1] > 0) {
                    raiseFloor(c, d, table, done[2]);
                }
                c.commit();
                return new long[] {done[0], done[1]};
            }
            List<String> names = new ArrayList<>(BATCH);
            long highest = 0;
            try (PreparedStatement ps = c.prepareStatement(d.sql(d.prunableSql(BATCH), table))) {
                ps.setString(1, Dialect.FENCE_FLOOR_ROW);
                ps.setLong(2, unusedForMillis);
                ps.setLong(3, unusedForMillis);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        names.add(rs.getString(1));
                        highest = Math.max(highest, rs.getLong(2));
                    }
                }
            }
            int deleted = 0;
            if (!names.isEmpty()) {
                try (PreparedStatement del = c.prepareStatement(d.sql(d.pruneSql(names.size()), table))) {
                    int i = 1;
                    for (String n : names) {
                        del.setString(i++, n);
                    }
                    del.setLong(i++, unusedForMillis);
                    del.setLong(i++, unusedForMillis);
                    del.setLong(i, highest);
                    deleted = del.executeUpdate();
                }
                if (deleted > 0) {
                    raiseFloor(c, d, table, highest);
                }
            }
            c.commit();
            return new long[] {names.size(), deleted};
        } catch (SQLException | RuntimeException e) {
            JdbcCalls.rollbackQuietly(c);
            failure = e;
            throw e;
        } finally {
            try {
                c.setAutoCommit(auto);
            } finally {
                restore(c, isolation, failure);
            }
        }
    }

    /**
     * Sets READ COMMITTED where the dialect wants it ({@link Dialect#pruneAtReadCommitted}), between
     * transactions.
     *
     * @return the level to restore, or -1 if nothing was changed
     */
    private static int readCommitted(Connection c, Dialect d) throws SQLException {
        if (!d.pruneAtReadCommitted()) {
            return -1;
        }
        int before = c.getTransactionIsolation();
        if (before == Connection.TRANSACTION_READ_COMMITTED) {
            return -1;
        }
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        return before;
    }

    /** Restores the level; if {@code failure} is on its way out, a failure here is added to it instead of replacing it. */
    private static void restore(Connection c, int isolation, @Nullable Exception failure) throws SQLException {
        if (isolation == -1) {
            return;
        }
        try {
            c.setTransactionIsolation(isolation);
        } catch (SQLException | RuntimeException e) {
            if (failure == null) {
                throw e;
            }
            failure.addSuppressed(e);
        }
    }

    /** @return {rows deleted, rows deleted, highest fence deleted} */
    private static long[] deleteReturning(Connection c, String sql, long unusedForMillis) throws SQLException {
        long deleted = 0;
        long highest = 0;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, Dialect.FENCE_FLOOR_ROW);
            ps.setLong(2, unusedForMillis);
            ps.setLong(3, unusedForMillis);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    deleted++;
                    highest = Math.max(highest, rs.getLong(1));
                }
            }
        }
        return new long[] {deleted, deleted, highest};
    }

    private static boolean floorRowExists(Connection c, Dialect d, String table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(d.sql(d.floorSql(), table))) {
            ps.setString(1, Dialect.FENCE_FLOOR_ROW);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** In the deleting transaction: the floor row must be there, or deleting could let a fence repeat. */
    private static void raiseFloor(Connection c, Dialect d, String table, long highest) throws SQLException {
        try (PreparedStatement raise = c.prepareStatement(d.sql(d.raiseFloorSql(), table))) {
            raise.setLong(1, highest);
            raise.setString(2, Dialect.FENCE_FLOOR_ROW);
            if (raise.executeUpdate() != 1 && !floorRowExists(c, d, table)) {
                // deleted by hand since ensureFloorRow: the rollback keeps every row. (A driver that counts
                // changed rows, not matched ones, says 0 when the floor was already that high: MariaDB's
                // useAffectedRows; hence the look.)
                throw new SQLException("the fence floor row of " + table + " was deleted while pruning; nothing was pruned "
                        + "in this batch: prune again", "55000");
            }
        }
    }
}
