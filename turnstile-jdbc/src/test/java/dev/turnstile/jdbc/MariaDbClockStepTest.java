package dev.turnstile.jdbc;

/** MariaDB: acquire, extend and release use UTC_TIMESTAMP(3), the server's clock. */
class MariaDbClockStepTest extends JdbcClockStepSupport {
    @Override String jdbcUrl() { return TestDatabases.MARIADB; }
}
