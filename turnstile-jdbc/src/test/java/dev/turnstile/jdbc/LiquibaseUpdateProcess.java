package dev.turnstile.jdbc;

import com.zaxxer.hikari.HikariDataSource;

/**
 * One application instance running its Liquibase update, in a JVM of its own (Liquibase keeps
 * its lock state per JVM, so two instances must be two processes): args are the JDBC URL and the
 * changelog. Exit 0 when the update succeeded.
 */
public final class LiquibaseUpdateProcess {
    private LiquibaseUpdateProcess() {}

    public static void main(String[] args) throws Exception {
        System.setProperty("liquibase.analytics.enabled", "false");
        System.setProperty("liquibase.changelogLockPollRate", "1");
        System.setProperty("liquibase.changelogLockWaitTimeInMinutes", "1");
        try (HikariDataSource pool = JdbcLockStoreTest.pool(args[0], true)) {
            JdbcMigrationsTest.liquibaseUpdate(pool, args[1]);
        }
        System.exit(0);
    }
}
