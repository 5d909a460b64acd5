package dev.turnstile.jdbc;

class SqliteLockStoreContractTest extends JdbcContractSupport {
    @Override String jdbcUrl() { return TestDatabases.SQLITE; }
    @Override String unreachableJdbcUrl() { return "jdbc:sqlite:/nonexistent-directory/turnstile/locks.db"; }
}
