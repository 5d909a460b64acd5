package dev.turnstile.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Issue 28: turnstile-jdbc's migrations under Spring Boot, on a fresh PostgreSQL schema each time.
 * turnstile.jdbc.flyway.enabled runs Turnstile's Flyway location with its own history table, after
 * the application's own Flyway (whose V1 it does not meet); a Liquibase master changelog that
 * includes Turnstile's creates the table before the store starts.
 */
class MigrationsTest {
    static {
        System.setProperty("liquibase.analytics.enabled", "false"); // nothing outside this machine answers
    }

    @RegisterExtension final PostgresSchemas schemas = new PostgresSchemas("starter_mig_");
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(Boot.dataSource()).withConfiguration(Boot.turnstile());

    private static void works(Turnstile turnstile) {
        String name = Boot.unique("migrated");
        Lease lease = turnstile.tryAcquire(name, LockOptions.lockAtMostFor(Duration.ofSeconds(5))).orElseThrow();
        assertThat(turnstile.tryAcquire(name)).isEmpty();
        lease.release();
    }

    /**
     * The application's own Flyway (Spring Boot's auto-configuration, its V1) and Turnstile's (its
     * V1) in one schema, each in its own history table. Spring Boot's runs first (the store depends
     * on database initialization): the other way round, it would find a non-empty schema without
     * its history table and refuse to start.
     */
    @Test
    void turnstilesFlywayRunsAfterAndBesideTheApplicationsOwn() throws Exception {
        String schema = schemas.fresh();
        runner.withConfiguration(Boot.flyway()).withPropertyValues(PostgresSchemas.dataSource(schema))
                .withPropertyValues("spring.flyway.locations=classpath:starter-migrations/app",
                        "turnstile.jdbc.flyway.enabled=true")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    works(ctx.getBean(Turnstile.class));
                });
        assertThat(PostgresSchemas.rows("SELECT version FROM " + schema + ".flyway_schema_history ORDER BY installed_rank"))
                .containsExactly("1");
        assertThat(PostgresSchemas.rows("SELECT version FROM " + schema + ".turnstile_schema_history ORDER BY installed_rank"))
                .as("a baseline below V1 (the schema held the application's table), then V1").containsExactly("0", "1");
        // a restart applies nothing more
        runner.withConfiguration(Boot.flyway()).withPropertyValues(PostgresSchemas.dataSource(schema))
                .withPropertyValues("spring.flyway.locations=classpath:starter-migrations/app",
                        "turnstile.jdbc.flyway.enabled=true")
                .run(ctx -> assertThat(ctx).hasNotFailed());
        assertThat(PostgresSchemas.rows("SELECT version FROM " + schema + ".turnstile_schema_history")).hasSize(2);
    }

    /** Without Spring Boot's Flyway, in a schema named by the table: Flyway puts table and history there. */
    @Test
    void turnstilesFlywayAloneInASchemaNamedByTheTable() throws Exception {
        String app = schemas.fresh();
        String locks = schemas.fresh();
        runner.withPropertyValues(PostgresSchemas.dataSource(app)).withPropertyValues("turnstile.jdbc.flyway.enabled=true",
                "turnstile.jdbc.table=" + locks.toUpperCase(java.util.Locale.ROOT) + ".turnstile_locks").run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    works(ctx.getBean(Turnstile.class));
                });
        assertThat(PostgresSchemas.rows("SELECT version FROM " + locks + ".turnstile_schema_history")).containsExactly("1");
    }

    /** The migrations create turnstile_locks only: another table name is refused with the fix. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"job_locks", "TURNSTILE_LOCKS"})
    void turnstilesFlywayRefusesAnotherTableName(String table) throws Exception {
        // TURNSTILE_LOCKS too: MariaDB and MySQL on Linux tell it from the migrations' turnstile_locks
        runner.withPropertyValues(PostgresSchemas.dataSource(schemas.fresh())).withPropertyValues("turnstile.jdbc.flyway.enabled=true",
                "turnstile.jdbc.table=" + table).run(ctx -> {
                    assertThat(ctx).hasFailed();
                    TurnstileStartupException e = StoreAutoConfigurationTest.findCause(ctx.getStartupFailure(),
                            TurnstileStartupException.class);
                    assertThat(e.getMessage()).contains("turnstile.jdbc.table is " + table);
                    assertThat(e.action()).contains("turnstile.jdbc.table=turnstile_locks");
                });
    }

    /**
     * Spring Boot's Liquibase with a master changelog that includes Turnstile's: the table is there
     * before the store's start-up probe asks for it.
     */
    @Test
    void aLiquibaseIncludeCreatesTheTableBeforeTheStoreStarts() throws Exception {
        String schema = schemas.fresh();
        runner.withConfiguration(Boot.liquibase()).withPropertyValues(PostgresSchemas.dataSource(schema))
                .withPropertyValues("spring.liquibase.change-log=classpath:starter-migrations/master.xml").run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    works(ctx.getBean(Turnstile.class));
                });
        assertThat(PostgresSchemas.rows("SELECT id FROM " + schema + ".databasechangelog ORDER BY orderexecuted"))
                .containsExactly("app-1", "turnstile-locks-1-check", "turnstile-locks-1-postgresql");
    }
}
