package dev.turnstile.spring;

import dev.turnstile.jdbc.Migrations;
import dev.turnstile.jdbc.SqlDialect;
import java.util.Locale;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code turnstile.jdbc.flyway.enabled=true}: runs turnstile-jdbc's Flyway migrations of the lock
 * table on the application's DataSource before the store is built, with their own schema-history
 * table, so that their version numbers never meet the application's (a Turnstile V1 beside the
 * application's V1, or a later application migration below Turnstile's). Flyway's classes are
 * touched only in {@link Run}, loaded once Flyway is known to be on the class path.
 */
final class TurnstileFlywayMigrations {
    private static final Logger log = LoggerFactory.getLogger(TurnstileFlywayMigrations.class);

    private TurnstileFlywayMigrations() {}

    /**
     * A history table Flyway can be given safely: Flyway quotes the table's own name, but on
     * PostgreSQL writes the name raw into the names of its primary key and index ({@code <name>_pk},
     * {@code <name>_s_idx}), so anything but a plain identifier would run as SQL; 57 characters keep
     * {@code <name>_s_idx} within PostgreSQL's 63.
     */
    private static final java.util.regex.Pattern HISTORY_TABLE = java.util.regex.Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,56}");

    static void migrate(DataSource dataSource, String table, String historyTable) {
        if (historyTable == null || !HISTORY_TABLE.matcher(historyTable).matches()) {
            throw new TurnstileStartupException("turnstile.jdbc.flyway.history-table is '" + historyTable + "', which is not "
                    + "a plain table name", "give letters, digits and '_' only, starting with a letter or '_', at most 57 "
                    + "characters, with no schema (the history table goes beside the lock table), or leave it unset for "
                    + Migrations.FLYWAY_HISTORY_TABLE, null);
        }
        if (historyTable.equalsIgnoreCase("flyway_schema_history")) {
            throw new TurnstileStartupException("turnstile.jdbc.flyway.history-table is " + historyTable + ", Flyway's own "
                    + "default history table, which the application's migrations use: Turnstile's V1 would meet the "
                    + "application's", "leave turnstile.jdbc.flyway.history-table unset (" + Migrations.FLYWAY_HISTORY_TABLE
                    + "), or give a table no other Flyway uses", null);
        }
        int dot = table.indexOf('.');
        String bare = table.substring(dot + 1);
        // Exactly as the migrations write it: MariaDB and MySQL on Linux tell TURNSTILE_LOCKS from turnstile_locks.
        if (!bare.equals("turnstile_locks")) {
            throw new TurnstileStartupException("turnstile.jdbc.flyway.enabled=true runs Turnstile's migrations, which "
                    + "create the table turnstile_locks (in lower case), but turnstile.jdbc.table is " + table,
                    "set turnstile.jdbc.table="
                    + (dot < 0 ? "" : table.substring(0, dot + 1)) + "turnstile_locks, or unset turnstile.jdbc.flyway.enabled "
                    + "and create " + table + " in your own migrations (with the DDL that 'turnstile schema' prints for "
                    + "?turnstile.table=" + table + ")", null);
        }
        if (!org.springframework.util.ClassUtils.isPresent("org.flywaydb.core.Flyway",
                TurnstileFlywayMigrations.class.getClassLoader())) {
            throw new TurnstileStartupException("turnstile.jdbc.flyway.enabled=true, but Flyway is not on the class path",
                    "add org.flywaydb:flyway-core (Spring Boot: spring-boot-starter-flyway), with "
                    + "flyway-database-postgresql on PostgreSQL or flyway-mysql on MariaDB/MySQL; or unset "
                    + "turnstile.jdbc.flyway.enabled", null);
        }
        SqlDialect dialect;
        try (java.sql.Connection c = dataSource.getConnection()) {
            dialect = SqlDialect.detect(c.getMetaData());
        } catch (java.sql.SQLException e) {
            log.error("cannot reach the database to run Turnstile's Flyway migrations: {}", e.toString());
            return; // the store's own start-up probe reports it (fail-fast decides)
        }
        String schema = dot < 0 ? null : fold(dialect, table.substring(0, dot));
        String location = Migrations.flywayLocation(dialect);
        try {
            int applied = Run.migrate(dataSource, location, historyTable, schema);
            log.info("Turnstile's Flyway migrations ({}, history table {}{}): {} applied", location, historyTable,
                    schema != null ? " in schema " + schema : "", applied);
        } catch (RuntimeException e) {
            throw new TurnstileStartupException("Turnstile's Flyway migrations (" + location + ", history table "
                    + historyTable + ") failed: " + e.getMessage(), "fix what the message says; \"No database found to "
                    + "handle\" means a Flyway module is missing: add flyway-database-postgresql (PostgreSQL) or "
                    + "flyway-mysql (MariaDB/MySQL); or unset turnstile.jdbc.flyway.enabled and create the table "
                    + "another way", e);
        }
    }

    /** The schema as the store's unquoted name means it (Flyway quotes the name it is given). */
    private static String fold(SqlDialect dialect, String schema) {
        return switch (dialect.id()) {
            case "postgresql" -> schema.toLowerCase(Locale.ROOT);
            case "h2" -> schema.toUpperCase(Locale.ROOT);
            default -> schema;
        };
    }

    /** The only class that refers to Flyway's. */
    static final class Run {
        private Run() {}

        /** Runs the migrations; {@code schema} null means the connection's default schema. */
        static int migrate(DataSource dataSource, String location, String historyTable, @Nullable String schema) {
            org.flywaydb.core.api.configuration.FluentConfiguration config = org.flywaydb.core.Flyway
                    .configure(TurnstileFlywayMigrations.class.getClassLoader())
                    .dataSource(dataSource)
                    .locations(location)
                    .table(historyTable)
                    // a schema that already holds the application's tables: a baseline below V1
                    .baselineOnMigrate(true)
                    .baselineVersion("0")
                    .failOnMissingLocations(true);
            if (schema != null) {
                config.schemas(schema);
            }
            org.flywaydb.core.Flyway flyway = config.load();
            // Instances that start at once on a database without the history table race to create
            // it before Flyway's lock exists: the loser fails ("… already exists, and is empty" on
            // MariaDB). The winner is done within moments, and a second try finds its history.
            for (int attempt = 1; ; attempt++) {
                try {
                    return flyway.migrate().migrationsExecuted;
                } catch (org.flywaydb.core.api.FlywayException e) {
                    if (attempt == RACE_ATTEMPTS) {
                        throw e;
                    }
                    log.info("Turnstile's Flyway migrations failed ({}); trying again, as another instance may be "
                            + "creating the history table", e.getMessage());
                    try {
                        Thread.sleep(250L * attempt + java.util.concurrent.ThreadLocalRandom.current().nextInt(250));
                    } catch (InterruptedException interrupted) {
                        Thread.currentThread().interrupt();
                        throw e;
                    }
                }
            }
        }

        /** Tries of a migration that may have met another instance's (see {@link #migrate}). */
        private static final int RACE_ATTEMPTS = 4;
    }
}
