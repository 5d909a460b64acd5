package dev.turnstile.jdbc;

/** The claiming contract on MariaDB. */
class MariaDbClaimTest extends JdbcClaimContractSupport {
    @Override
    String jdbcUrl() {
        return TestDatabases.MARIADB;
    }
}
