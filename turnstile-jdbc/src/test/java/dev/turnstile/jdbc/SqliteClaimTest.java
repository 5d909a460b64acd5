package dev.turnstile.jdbc;

/** The claiming contract on an SQLite file in WAL mode. */
class SqliteClaimTest extends JdbcClaimContractSupport {
    static final String URL = "jdbc:sqlite:" + TestDatabases.SQLITE.substring("jdbc:sqlite:".length()).replace("locks.db", "claims.db")
            + "?journal_mode=WAL&busy_timeout=10000";

    @Override
    String jdbcUrl() {
        return URL;
    }
}
