package dev.turnstile.jdbc;

/** The MariaDB server through MySQL Connector/J: the dialect must not depend on the MariaDB driver. */
class MariaDbWithMySqlDriverLockStoreContractTest extends JdbcContractSupport {
    @Override String jdbcUrl() { return TestDatabases.MYSQL_DRIVER; }
    @Override String unreachableJdbcUrl() { return "jdbc:mysql://127.0.0.1:1/test?user=root&connectTimeout=2000"; }
}
