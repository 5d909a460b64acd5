package dev.turnstile.jdbc;

import dev.turnstile.StoreSchemaException;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.TurnstileException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What a {@link JdbcLockStore} reports for a failed statement: which of its errors, and how to fix it. */
final class LockTableErrors {
    private static final Logger log = LoggerFactory.getLogger(LockTableErrors.class);
    private final DataSource dataSource;
    private final String table;
    private final String description;
    /** Removes the URL's secrets from driver messages, or null (a store on the application's DataSource). */
    private final @Nullable UnaryOperator<String> scrub;

    LockTableErrors(DataSource dataSource, String table, String description, @Nullable UnaryOperator<String> scrub) {
        this.dataSource = dataSource;
        this.table = table;
        this.description = description;
        this.scrub = scrub;
    }

    /**
     * Why a missing lock table may be there after all, under a quoted name in another case; empty
     * when it is not, or when that cannot be looked up (the error being reported says enough).
     */
    private String quotedTwinAdvice(Dialect d) {
        if (d == null) {
            return "";
        }
        QuotedNames.Folding folding = QuotedNames.Folding.of(d.id());
        try (Connection c = dataSource.getConnection()) {
            String[] parts = QuotedNames.split(c, table, d.id());
            List<String> twins = QuotedNames.quotedTwins(c.getMetaData(), parts, folding);
            String advice = twins.isEmpty() ? "" : QuotedNames.twinAdvice(twins, table, folding);
            JdbcCalls.commitIfNeeded(c);
            return advice;
        } catch (SQLException | RuntimeException e) {
            log.debug("cannot look for a quoted twin of {}: {}", table, e.toString());
            return "";
        }
    }

    /**
     * The shipped migrations, for the default table name only (they create {@code turnstile_locks}):
     * one short clause, or empty.
     */
    static String migrationsAdvice(SqlDialect d, String table) {
        String bare = table.substring(table.indexOf('.') + 1);
        if (!bare.equalsIgnoreCase(Dialect.DEFAULT_TABLE)) {
            return "";
        }
        return ", or run Turnstile's migrations (Flyway location " + Migrations.flywayLocation(d)
                + " with its own history table " + Migrations.FLYWAY_HISTORY_TABLE + ", or Liquibase changelog "
                + Migrations.LIQUIBASE_CHANGELOG + ")";
    }

    /** MariaDB/MySQL 1366, "Incorrect string value": a character the column's character set lacks. */
    private static final int ER_TRUNCATED_WRONG_VALUE_FOR_FIELD = 1366;

    /**
     * The store's exception for a driver's: a schema error where the table or the grants do not fit
     * (retrying never helps), else unavailable, each naming the fix, the URL's secrets scrubbed.
     *
     * @param dialect the database's dialect, or null before the first connection detected it
     */
    TurnstileException translate(@Nullable Dialect dialect, String what, SQLException e) {
        if (dialect != null && dialect.isMissingTable(e)) {
            String twin = quotedTwinAdvice(dialect);
            return new StoreSchemaException("cannot " + what + ": the lock table '" + table + "' does not exist in "
                    + description + (twin.isEmpty() ? ". Create it with the DDL that 'turnstile schema --store <url>' "
                    + "prints (or add --apply to run it), or build the store with createTableIfMissing(true)"
                    + migrationsAdvice(dialect, table) : "; " + twin), e);
        }
        if (dialect != null && dialect.id().equals("mariadb") && e.getErrorCode() == ER_TRUNCATED_WRONG_VALUE_FOR_FIELD) {
            // a _bin collation of another character set (latin1_bin) passes the collation check,
            // and names outside that character set then fail here, with the driver's bare text
            return new StoreSchemaException("cannot " + what + ": the lock table '" + table + "' cannot store this name:"
                    + " its column 'name' has a character set that does not hold every character (not utf8mb4). Fix it with:\n"
                    + "ALTER TABLE " + table + " MODIFY name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;", e);
        }
        if (dialect != null ? dialect.isSchemaMismatch(e) : e.getSQLState() != null && e.getSQLState().startsWith("42")) {
            // Syntax or access rule (a column missing or of another type, a schema that does not
            // exist, no permission): the table or the grants do not fit, and retrying never helps.
            String text = scrub != null ? scrub.apply(e.getMessage()) : e.getMessage();
            return new StoreSchemaException("cannot " + what + " on " + description + ": the database refused the "
                    + "statement, so the lock table '" + table + "' or the permissions on it do not fit: " + text
                    + (e.getSQLState() != null ? " (SQLState " + e.getSQLState() + ")" : "") + ". Compare the table with the DDL that 'turnstile schema "
                    + "--store <url>' prints", scrub != null ? new JdbcLockStoreFactory.ScrubbedException(e, scrub) : e);
        }
        if (dialect != null && dialect.isDiskFull(e)) {
            return new StoreUnavailableException("cannot " + what + " on " + description + ": " + Dialect.DISK_FULL
                    + ". Cause: " + (scrub != null ? scrub.apply(e.getMessage()) : e.getMessage()),
                    scrub != null ? new JdbcLockStoreFactory.ScrubbedException(e, scrub) : e);
        }
        if (JdbcCalls.isSqliteBusy(dialect, e)) {
            return new StoreUnavailableException("cannot " + what + " on " + description + ": the database file is locked by "
                    + "another process's transaction for longer than the busy timeout (turnstile run: --wait, at least 1s)"
                    + " (SQLITE_BUSY)", e);
        }
        if (scrub != null) {
            // drivers echo the URL, or pieces of it, in their messages; the URL may carry a password
            return new StoreUnavailableException("cannot " + what + " on " + description + ": " + scrub.apply(e.getMessage())
                    + (e.getSQLState() != null ? " (SQLState " + e.getSQLState() + ")" : ""),
                    new JdbcLockStoreFactory.ScrubbedException(e, scrub));
        }
        return new StoreUnavailableException("cannot " + what + " on " + description + ": " + e.getMessage()
                + (e.getSQLState() != null ? " (SQLState " + e.getSQLState() + ")" : ""), e);
    }
}
