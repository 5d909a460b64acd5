package dev.turnstile.jdbc;

/** PostgreSQL: acquire, extend and release use clock_timestamp(), the server's clock. */
class PostgresClockStepTest extends JdbcClockStepSupport {
    @Override String jdbcUrl() { return TestDatabases.POSTGRES; }
}
