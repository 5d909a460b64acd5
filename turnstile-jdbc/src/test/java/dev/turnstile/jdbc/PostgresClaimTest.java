package dev.turnstile.jdbc;

/** The claiming contract on PostgreSQL. */
class PostgresClaimTest extends JdbcClaimContractSupport {
    @Override
    String jdbcUrl() {
        return TestDatabases.POSTGRES;
    }
}
