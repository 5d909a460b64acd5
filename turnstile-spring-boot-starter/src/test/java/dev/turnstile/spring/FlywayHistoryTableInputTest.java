package dev.turnstile.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * hostile turnstile.jdbc.flyway.history-table values with turnstile.jdbc.flyway.enabled=true on
 * PostgreSQL. Each must either be refused with a message that names the property and the fix, or
 * work, on the first start and on every restart; nothing in it may run as SQL.
 */
class FlywayHistoryTableInputTest {
    @RegisterExtension final PostgresSchemas schemas = new PostgresSchemas("atk_hist_");
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(Boot.dataSource()).withConfiguration(Boot.turnstile());

    @ParameterizedTest
    @ValueSource(strings = {
        "",                                                     // empty
        "   ",                                                  // whitespace only
        " turnstile_schema_history ",                           // padded
        "select",                                               // a reserved word
        "Turnstile-History",                                    // quotes needed
        "x\"; DROP TABLE canary; --",                           // a quote and a statement
        "x'; DROP TABLE canary; --",
        // Flyway quotes the table but puts the raw name into the constraint and index names of its create script
        "x\" PRIMARY KEY (\"installed_rank\");DROP TABLE canary;COMMIT;--",
        "public.turnstile_schema_history",                      // schema-qualified
        "verlauf_\u00fc\u00df_\u65e5\u672c",                    // unicode
        "h_0123456789012345678901234567890123456789012345678901234567890123456789", // 72 chars
    })
    void aHostileHistoryTableIsRefusedNamingThePropertyOrWorksOnEveryStart(String history) throws Exception {
        String schema = schemas.fresh();
        PostgresSchemas.exec("CREATE TABLE " + schema + ".canary (id int)");
        for (int start = 1; start <= 2; start++) {
            int n = start;
            boolean[] failed = {false};
            runner.withPropertyValues("spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test?currentSchema=" + schema,
                    "spring.datasource.username=postgres", "turnstile.jdbc.flyway.enabled=true")
                    .withPropertyValues("turnstile.jdbc.flyway.history-table=" + history)
                    .run(ctx -> {
                        if (ctx.getStartupFailure() != null) {
                            failed[0] = true;
                            TurnstileStartupException e = StoreAutoConfigurationTest.findCause(ctx.getStartupFailure(),
                                    TurnstileStartupException.class);
                            assertThat(e).as("start %d with history-table [%s] failed with: %s", n, history,
                                    ctx.getStartupFailure()).isNotNull();
                            assertThat(e.getMessage() + "\n" + e.action())
                                    .as("start %d with history-table [%s]: the failure names the property", n, history)
                                    .contains("turnstile.jdbc.flyway.history-table");
                        }
                    });
            assertThat(PostgresSchemas.rows("SELECT table_name FROM information_schema.tables WHERE table_schema = '" + schema
                    + "' AND table_name = 'canary'")).as("the canary table after start %d with history-table [%s]: "
                    + "dropped means the property's text ran as SQL", n, history).containsExactly("canary");
            if (failed[0]) {
                assertThat(start).as("[%s] worked on the first start and failed on a restart", history).isEqualTo(1);
                return; // refused, with the property named
            }
            assertThat(PostgresSchemas.rows("SELECT table_name FROM information_schema.tables WHERE table_schema = '" + schema + "'"))
                    .as("tables after start %d with history-table [%s]", n, history).contains("turnstile_locks");
        }
        List<String> tables = PostgresSchemas.rows("SELECT table_name FROM information_schema.tables WHERE table_schema = '" + schema
                + "' AND (table_name LIKE '%.%' OR table_name <> trim(table_name) OR table_name = '')");
        assertThat(tables).as("history tables whose name is not what a user reading the property expects").isEmpty();
    }

    /**
     * The history table of the application's own Flyway (spring.flyway.table, default
     * flyway_schema_history): Turnstile's V1 would share it with the application's V1.
     */
    @Test
    void theApplicationsOwnHistoryTableIsRefusedNamingTheProperty() throws Exception {
        String schema = schemas.fresh();
        runner.withConfiguration(Boot.flyway())
                .withPropertyValues("spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test?currentSchema=" + schema,
                        "spring.datasource.username=postgres", "spring.flyway.locations=classpath:starter-migrations/app",
                        "turnstile.jdbc.flyway.enabled=true", "turnstile.jdbc.flyway.history-table=flyway_schema_history")
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    TurnstileStartupException e = StoreAutoConfigurationTest.findCause(ctx.getStartupFailure(),
                            TurnstileStartupException.class);
                    assertThat(e).as("failure: %s", ctx.getStartupFailure()).isNotNull();
                    assertThat(e.getMessage() + "\n" + e.action()).contains("turnstile.jdbc.flyway.history-table");
                });
    }
}
