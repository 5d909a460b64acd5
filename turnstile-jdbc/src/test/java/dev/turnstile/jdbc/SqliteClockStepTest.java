package dev.turnstile.jdbc;

/**
 * SQLite: the database is a file and every process judges time by its own clock (SqliteDialect),
 * so the stepped holder's clock is the store's clock for its own statements: stepped back, its
 * lockAtLeastFor still ends at the acquire's time plus lockAtLeastFor; stepped ahead, it sees its
 * own lease as over and is told so, while the others keep seeing it until its TTL.
 */
class SqliteClockStepTest extends JdbcClockStepSupport {
    @Override String jdbcUrl() { return TestDatabases.SQLITE; }
    @Override protected boolean storeClockIsTheClients() { return true; }
}
