package dev.turnstile.jdbc;

class MariaDbLockStoreContractTest extends JdbcContractSupport {
    @Override String jdbcUrl() { return TestDatabases.MARIADB; }
    @Override String unreachableJdbcUrl() { return "jdbc:mariadb://127.0.0.1:1/test?user=root&connectTimeout=2000"; }
}
