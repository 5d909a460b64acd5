package dev.turnstile.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.TurnstileListener;
import dev.turnstile.AcquireOutcome;
import dev.turnstile.job.JobContext;
import dev.turnstile.job.JobInterceptor;
import dev.turnstile.job.JobRunner;
import dev.turnstile.spi.LockStore;
import dev.turnstile.testing.InMemoryLockStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

/** Which store, client and runner the auto-configuration builds, and when it steps aside. */
class StoreAutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(Boot.turnstile());

    private static void worksOn(Turnstile turnstile) {
        String name = Boot.unique("starter-store");
        Optional<Lease> lease = turnstile.tryAcquire(name, LockOptions.lockAtMostFor(Duration.ofSeconds(5)));
        assertThat(lease).isPresent();
        assertThat(turnstile.tryAcquire(name)).isEmpty();
        lease.get().release();
    }

    @Test
    void storeFromUrl() {
        runner.withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl()).run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(LockStore.class).hasSingleBean(Turnstile.class)
                    .hasSingleBean(JobRunner.class).hasSingleBean(TurnstileLifecycle.class);
            assertThat(ctx.getBean(LockStore.class).description()).contains("sqlite");
            worksOn(ctx.getBean(Turnstile.class));
        });
    }

    @Test
    void ownerDefaultsToHostAndPidAndCanBeSet() {
        runner.withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl()).run(ctx ->
                assertThat(ctx.getBean(Turnstile.class).owner()).contains(":" + ProcessHandle.current().pid() + ":"));
        runner.withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl(), "turnstile.owner=blue-1").run(ctx ->
                assertThat(ctx.getBean(Turnstile.class).owner()).isEqualTo("blue-1"));
    }

    @Test
    void storeFromTheApplicationsDataSource() {
        String table = "turnstile_starter_" + Boot.unique("t").replace('-', '_');
        runner.withConfiguration(Boot.dataSource())
                .withPropertyValues("spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test", "spring.datasource.username=postgres",
                        "turnstile.jdbc.create-table=true", "turnstile.jdbc.table=" + table)
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(LockStore.class).description()).contains(table);
                    worksOn(ctx.getBean(Turnstile.class));
                });
    }

    /**
     * Issue 28: a missing lock table used to start the application and skip every locked run, with
     * two ERROR lines per tick. It fails the start-up, naming the property and the DDL, unless
     * fail-fast is set to false; Spring Boot's failure report gives the fix as the action.
     */
    @Test
    void aMissingLockTableFailsTheStartWithThePropertyAndTheDdl() {
        String table = "turnstile_missing_" + Boot.unique("t").replace('-', '_');
        ApplicationContextRunner pg = runner.withConfiguration(Boot.dataSource()).withPropertyValues(
                "spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test", "spring.datasource.username=postgres",
                "turnstile.jdbc.table=" + table);
        pg.run(ctx -> {
            assertThat(ctx).hasFailed();
            Throwable failure = ctx.getStartupFailure();
            TurnstileStartupException startup = findCause(failure, TurnstileStartupException.class);
            assertThat(startup).as("the failure names Turnstile's cause").isNotNull();
            assertThat(startup.getMessage()).contains(table).contains("does not exist");
            assertThat(startup.action()).contains("turnstile.jdbc.create-table=true").contains("CREATE TABLE")
                    .contains(table);
            org.springframework.boot.diagnostics.FailureAnalysis analysis = new TurnstileFailureAnalyzer().analyze(failure);
            assertThat(analysis.getDescription()).startsWith("Turnstile: ").contains(table);
            assertThat(analysis.getAction()).contains("turnstile.jdbc.create-table=true")
                    .as("the shipped migrations create turnstile_locks only").doesNotContain("Flyway");
        });
        // the default table name: the action also names Turnstile's migrations (a schema with no such table)
        String schema = "turnstile_missing_" + Boot.unique("s").replace('-', '_');
        runner.withConfiguration(Boot.dataSource()).withPropertyValues(
                "spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test", "spring.datasource.username=postgres",
                "turnstile.jdbc.table=" + schema + ".turnstile_locks").run(ctx -> {
                    assertThat(ctx).hasFailed();
                    org.springframework.boot.diagnostics.FailureAnalysis analysis =
                            new TurnstileFailureAnalyzer().analyze(ctx.getStartupFailure());
                    assertThat(analysis.getAction()).contains("turnstile.jdbc.create-table=true")
                            .contains("turnstile.jdbc.flyway.enabled=true")
                            .contains("Flyway location classpath:dev/turnstile/jdbc/flyway/")
                            .contains("Liquibase changelog dev/turnstile/jdbc/liquibase/turnstile-changelog.xml");
                    assertThat(analysis.getDescription()).contains("Flyway location classpath:dev/turnstile/jdbc/flyway/postgresql");
                });
        pg.withPropertyValues("turnstile.store.fail-fast=false").run(ctx -> assertThat(ctx).hasNotFailed());
        String url = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres&turnstile.table=" + table;
        runner.withPropertyValues("turnstile.store.url=" + url).run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(findCause(ctx.getStartupFailure(), TurnstileStartupException.class).action())
                    .contains("turnstile.createTable=true");
        });
    }

    /** Listening for forced releases on a pool of one would starve the renewals: refused, with the fix. */
    @Test
    void notifyForcedReleasesOnAPoolOfOneIsRefused() {
        runner.withConfiguration(Boot.dataSource()).withPropertyValues(
                "spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test", "spring.datasource.username=postgres",
                "spring.datasource.hikari.maximum-pool-size=1", "turnstile.jdbc.create-table=true",
                "turnstile.jdbc.notify-forced-releases=true").run(ctx -> {
                    assertThat(ctx).hasFailed();
                    TurnstileStartupException e = findCause(ctx.getStartupFailure(), TurnstileStartupException.class);
                    assertThat(e).isNotNull();
                    assertThat(e.getMessage()).contains("one connection");
                    assertThat(e.action()).contains("maximum-pool-size");
                });
        // left to its default, a pool of one simply does not listen
        runner.withConfiguration(Boot.dataSource()).withPropertyValues(
                "spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test", "spring.datasource.username=postgres",
                "spring.datasource.hikari.maximum-pool-size=1", "turnstile.jdbc.create-table=true")
                .run(ctx -> assertThat(ctx).hasNotFailed());
    }

    /** A bad store URL and an unreachable store with fail-fast are reported by Spring Boot with the fix. */
    @Test
    void badUrlsAndFailFastAreReportedWithTheFix() {
        runner.withPropertyValues("turnstile.store.url=mongo://x").run(ctx -> {
            TurnstileStartupException e = findCause(ctx.getStartupFailure(), TurnstileStartupException.class);
            assertThat(e).isNotNull();
            assertThat(new TurnstileFailureAnalyzer().analyze(ctx.getStartupFailure()).getAction())
                    .contains("turnstile.store.url");
        });
        runner.withPropertyValues("turnstile.store.url=jdbc:postgresql://127.0.0.1:1/test?user=postgres",
                "turnstile.store.fail-fast=true").run(ctx -> {
                    TurnstileStartupException e = findCause(ctx.getStartupFailure(), TurnstileStartupException.class);
                    assertThat(e).isNotNull();
                    assertThat(e.action()).contains("fail-fast");
                });
    }

    static <T extends Throwable> T findCause(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }

    @Test
    void storeFromTheApplicationsRedisConnection() {
        String prefix = Boot.unique("starter-test") + ":";
        runner.withConfiguration(Boot.redis())
                .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=6379",
                        "turnstile.redis.key-prefix=" + prefix)
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(LockStore.class).description()).contains("redis").contains(prefix);
                    worksOn(ctx.getBean(Turnstile.class));
                });
    }

    @Test
    void urlWinsOverTheDataSource() {
        runner.withConfiguration(Boot.dataSource())
                .withPropertyValues("spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test", "spring.datasource.username=postgres",
                        "turnstile.store.url=" + Boot.sqliteUrl())
                .run(ctx -> assertThat(ctx.getBean(LockStore.class).description()).contains("sqlite"));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnStore {
        @Bean
        LockStore myStore() {
            return new InMemoryLockStore();
        }
    }

    @Test
    void usersLockStoreWins() {
        runner.withUserConfiguration(OwnStore.class).withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl()).run(ctx -> {
            assertThat(ctx).hasSingleBean(LockStore.class).hasBean("myStore");
            assertThat(ctx.getBean(Turnstile.class).store()).isSameAs(ctx.getBean("myStore"));
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnTurnstile {
        @Bean(destroyMethod = "close")
        Turnstile myTurnstile() {
            return Turnstile.builder(new InMemoryLockStore()).owner("mine").build();
        }
    }

    @Test
    void usersTurnstileWins() {
        runner.withUserConfiguration(OwnTurnstile.class).withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl()).run(ctx -> {
            assertThat(ctx).hasSingleBean(Turnstile.class).doesNotHaveBean(LockStore.class);
            assertThat(ctx.getBean(JobRunner.class).turnstile().owner()).isEqualTo("mine");
        });
    }

    @Test
    void disabled() {
        runner.withPropertyValues("turnstile.enabled=false", "turnstile.store.url=" + Boot.sqliteUrl())
                .run(ctx -> assertThat(ctx).doesNotHaveBean(Turnstile.class).doesNotHaveBean(LockStore.class));
    }

    @Test
    void noStoreFailsStartUpSayingWhatToConfigure() {
        runner.run(ctx -> assertThat(ctx).hasFailed().getFailure()
                .hasStackTraceContaining("Turnstile has no lock store: set turnstile.store.url"));
    }

    @Test
    void unknownUrlFailsStartUp() {
        runner.withPropertyValues("turnstile.store.url=jdbc:postgresql://").run(ctx -> assertThat(ctx).hasFailed().getFailure()
                .hasStackTraceContaining("turnstile.store.url: "));
        runner.withPropertyValues("turnstile.store.url=mongo://x").run(ctx -> assertThat(ctx).hasFailed().getFailure()
                .hasStackTraceContaining("turnstile.store.url: unknown store URL 'mongo://x': supported schemes are"));
    }

    @Test
    void badDefaultsFailStartUpNamingTheProperty() {
        runner.withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl(), "turnstile.defaults.lock-at-least-for=1m")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().hasStackTraceContaining("turnstile.defaults")
                        .hasStackTraceContaining("lockAtLeastFor"));
        runner.withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl(), "turnstile.defaults.lock-at-most-for=0s")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure()
                        .hasStackTraceContaining("turnstile.defaults.lock-at-most-for"));
        runner.withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl(), "turnstile.owner= ")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().hasStackTraceContaining("turnstile.owner"));
    }

    @Test
    void unreachableStoreStartsAnywayUnlessFailFast() {
        String url = "jdbc:postgresql://127.0.0.1:1/test?user=postgres";
        runner.withPropertyValues("turnstile.store.url=" + url).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx.getBean(JobRunner.class).run(Boot.unique("down"), () -> {}).status())
                    .isEqualTo(dev.turnstile.job.JobResult.Status.SKIPPED_STORE_UNAVAILABLE);
        });
        runner.withPropertyValues("turnstile.store.url=" + url, "turnstile.store.fail-fast=true")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().hasStackTraceContaining("127.0.0.1:1"));
        runner.withPropertyValues("turnstile.store.url=" + url, "turnstile.store.fail-fast=true")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().hasStackTraceContaining("turnstile.store.fail-fast is set"));
    }

    static final List<String> EVENTS = new CopyOnWriteArrayList<>();

    @Configuration(proxyBeanMethods = false)
    static class Hooks {
        @Bean
        TurnstileListener recordingListener() {
            return new TurnstileListener() {
                @Override
                public void onAcquire(String name, AcquireOutcome outcome, Duration latency) {
                    EVENTS.add("acquire " + name + " " + outcome);
                }
            };
        }

        @Bean
        @Order(2)
        JobInterceptor inner() {
            return new JobInterceptor() {
                @Override
                public <T> T around(JobContext ctx, Callable<T> run) throws Exception {
                    EVENTS.add("inner " + ctx.name());
                    return run.call();
                }
            };
        }

        @Bean
        @Order(1)
        JobInterceptor outer() {
            return new JobInterceptor() {
                @Override
                public <T> T around(JobContext ctx, Callable<T> run) throws Exception {
                    EVENTS.add("outer " + ctx.name());
                    return run.call();
                }
            };
        }

        @Bean
        TurnstileBuilderCustomizer customizer() {
            return b -> b.owner("customized");
        }
    }

    @Test
    void listenerAndInterceptorBeansAreRegisteredInOrder() {
        EVENTS.clear();
        runner.withUserConfiguration(Hooks.class).withPropertyValues("turnstile.store.url=" + Boot.sqliteUrl()).run(ctx -> {
            assertThat(ctx.getBean(Turnstile.class).owner()).isEqualTo("customized");
            ctx.getBean(JobRunner.class).run("hooked", () -> EVENTS.add("job"));
            assertThat(EVENTS).containsExactly("acquire hooked ACQUIRED", "outer hooked", "inner hooked", "job");
        });
    }
}
