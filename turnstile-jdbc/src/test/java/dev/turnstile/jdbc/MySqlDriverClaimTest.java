package dev.turnstile.jdbc;

/** The claiming contract through MySQL Connector/J (against the MariaDB test server: no MySQL 8 server here). */
class MySqlDriverClaimTest extends JdbcClaimContractSupport {
    @Override
    String jdbcUrl() {
        return "jdbc:mysql://127.0.0.1:3306/test?user=root";
    }
}
