package dev.turnstile.jdbc;

/**
 * Where turnstile-jdbc's jar keeps the lock table ({@code turnstile_locks}) as migrations, for
 * applications whose schema is migrated by Flyway or Liquibase rather than created by the store.
 * Each is exactly the DDL of {@link SqlDialect#createTable} for the default table name; another
 * table name needs your own migration with that DDL (docs/migrations.md).
 *
 * <pre>{@code
 * Flyway.configure().dataSource(dataSource)
 *         .locations(Migrations.flywayLocation(SqlDialect.POSTGRESQL))
 *         .table(Migrations.FLYWAY_HISTORY_TABLE)        // never your own history table
 *         .baselineOnMigrate(true).baselineVersion("0")  // a schema with your tables in it
 *         .load().migrate();
 * }</pre>
 */
public final class Migrations {
    /**
     * The Liquibase changelog to {@code include} from a master changelog (a class path resource):
     * {@value}.
     */
    public static final String LIQUIBASE_CHANGELOG = "dev/turnstile/jdbc/liquibase/turnstile-changelog.xml";

    /**
     * The schema-history table that Turnstile's Flyway location should be run with, apart from the
     * application's own: {@value}.
     */
    public static final String FLYWAY_HISTORY_TABLE = "turnstile_schema_history";

    private Migrations() {}

    /**
     * Returns the Flyway location of a database's migrations, such as
     * {@code classpath:dev/turnstile/jdbc/flyway/postgresql}. The folders are named as Spring
     * Boot's {@code {vendor}}: {@code postgresql}, {@code mariadb}, {@code mysql}, {@code h2} and
     * {@code sqlite}; MariaDB's dialect gets {@code mariadb}, whose SQL is the same as {@code mysql}'s.
     *
     * @param dialect the database's dialect
     * @return the location, with its {@code classpath:} prefix
     * @throws IllegalArgumentException if {@code dialect} is null
     */
    public static String flywayLocation(SqlDialect dialect) {
        if (dialect == null) {
            throw new IllegalArgumentException("dialect is null: give one of the SqlDialect constants");
        }
        return "classpath:dev/turnstile/jdbc/flyway/" + dialect.id();
    }
}
