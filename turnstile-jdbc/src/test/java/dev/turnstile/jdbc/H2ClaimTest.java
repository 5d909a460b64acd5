package dev.turnstile.jdbc;

/** The claiming contract on H2 (in memory, shared by the test JVM's connections). */
class H2ClaimTest extends JdbcClaimContractSupport {
    @Override
    String jdbcUrl() {
        return "jdbc:h2:mem:claims;DB_CLOSE_DELAY=-1";
    }
}
