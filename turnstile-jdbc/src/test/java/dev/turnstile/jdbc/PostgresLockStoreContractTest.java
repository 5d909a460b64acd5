package dev.turnstile.jdbc;

class PostgresLockStoreContractTest extends JdbcContractSupport {
    @Override String jdbcUrl() { return TestDatabases.POSTGRES; }
    @Override String unreachableJdbcUrl() { return "jdbc:postgresql://127.0.0.1:1/test?user=postgres&connectTimeout=2"; }
}
