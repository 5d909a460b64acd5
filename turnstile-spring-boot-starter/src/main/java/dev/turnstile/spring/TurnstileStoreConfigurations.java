package dev.turnstile.spring;

import dev.turnstile.StoreSchemaException;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import dev.turnstile.jdbc.JdbcLockStore;
import dev.turnstile.jdbc.SqlDialect;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import dev.turnstile.spi.StoreUrls;
import java.util.Objects;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The store, in order of preference: {@code turnstile.store.url}, then the application's
 * {@code DataSource}, then its Redis connection ({@link TurnstileRedisStoreConfiguration}). A
 * {@link LockStore} or {@link Turnstile} bean of the application's own wins over all of them.
 */
final class TurnstileStoreConfigurations {
    private static final Logger log = LoggerFactory.getLogger(TurnstileStoreConfigurations.class);

    private TurnstileStoreConfigurations() {}

    /**
     * Names the store at start and asks it once. A schema problem (a missing lock table) is a
     * misconfiguration that would skip every locked run: it fails the start-up, with the fix,
     * unless {@code turnstile.store.fail-fast=false}. An unreachable store is an outage: it fails
     * the start-up only with {@code fail-fast=true}; otherwise it is logged, the health indicator
     * reports it and locked runs are skipped until it is back.
     *
     * @param fix for a schema problem, the setting that fixes it in this application and the DDL,
     *     or null to keep the store's own advice
     */
    static LockStore checked(LockStore store, TurnstileProperties props, java.util.function.@Nullable Supplier<String> fix) {
        log.info("Turnstile lock store: {}", store.description());
        Boolean failFast = props.getStore().getFailFast();
        try {
            probe(store);
        } catch (StoreSchemaException e) {
            String advice = fix != null ? fix.get() : null;
            String message = "the lock store " + store.description() + " cannot be used: " + e.getMessage()
                    + (advice != null ? "\n" + advice : "");
            if (Boolean.FALSE.equals(failFast)) {
                log.error("{} (turnstile.store.fail-fast=false: starting anyway; every locked run is skipped until it "
                        + "is fixed)", message);
                return store;
            }
            store.close();
            throw new TurnstileStartupException(message, advice != null ? advice
                    : "fix the store's schema as the message says, or set turnstile.store.fail-fast=false to start anyway",
                    e);
        } catch (RuntimeException e) {
            if (Boolean.TRUE.equals(failFast)) {
                store.close();
                throw new TurnstileStartupException("turnstile.store.fail-fast is set and the lock store "
                        + store.description() + " cannot be used: " + e.getMessage(), "fix the store or its settings, or "
                        + "unset turnstile.store.fail-fast to start anyway and let the health indicator report it", e);
            }
            log.error("lock store {} cannot be used at start-up; locked runs are skipped until it is back: {}",
                    store.description(), e.getMessage());
        }
        return store;
    }

    /**
     * Asks the store once, for at most {@link #PROBE_TIMEOUT}: a store over the application's own
     * connection is bounded by that connection's command timeout (Spring Data Redis: 60 s), which
     * must not hold up the start-up.
     */
    private static void probe(LockStore store) {
        java.util.concurrent.CompletableFuture<Object> probe = new java.util.concurrent.CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                store.heldLocks();
                probe.complete(null);
            } catch (Throwable e) {
                probe.completeExceptionally(e);
            }
        }, "turnstile-start-probe");
        t.setDaemon(true);
        t.start();
        try {
            probe.get(PROBE_TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new StoreUnavailableException(String.valueOf(e.getCause()), e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new StoreUnavailableException("the store did not answer within " + PROBE_TIMEOUT.toSeconds() + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("interrupted while asking the store", e);
        }
    }

    private static final java.time.Duration PROBE_TIMEOUT = java.time.Duration.ofSeconds(10);

    /** A bad {@code turnstile.store.url}, reported by Spring Boot with what to fix. */
    private static TurnstileStartupException badUrl(IllegalArgumentException e) {
        return new TurnstileStartupException("turnstile.store.url: " + e.getMessage(),
                "fix turnstile.store.url (or TURNSTILE_STORE_URL) as the message says", e);
    }

    /** The DDL for {@code table} on {@code dataSource}'s database, or null if it cannot be told. */
    static @Nullable String ddl(DataSource dataSource, String table) {
        try (java.sql.Connection c = dataSource.getConnection()) {
            return SqlDialect.detect(c.getMetaData()).createTable(table);
        } catch (java.sql.SQLException | RuntimeException e) {
            return null;
        }
    }

    /** The shipped migrations, in one line (turnstile-jdbc's Migrations; for the default table name). */
    static final String MIGRATIONS = "Or run Turnstile's migrations: Flyway location "
            + "classpath:dev/turnstile/jdbc/flyway/<postgresql|mariadb|mysql|h2|sqlite> (own history table), or Liquibase "
            + "changelog dev/turnstile/jdbc/liquibase/turnstile-changelog.xml (docs/migrations.md).";

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "turnstile.store", name = "url")
    @ConditionalOnMissingBean({LockStore.class, Turnstile.class})
    static class FromUrl {

        @Bean(destroyMethod = "close")
        LockStore turnstileLockStore(TurnstileProperties props) {
            // set: this configuration is @ConditionalOnProperty turnstile.store.url
            String url = Objects.requireNonNull(props.getStore().getUrl(), "turnstile.store.url").trim();
            try {
                LockStores.factoryFor(url);
                LockStores.checkUserInfo(url);
            } catch (IllegalArgumentException e) {
                throw badUrl(e);
            }
            LockStore store;
            try {
                store = LockStores.open(url);
            } catch (IllegalArgumentException e) {
                throw badUrl(e);
            } catch (StoreUnavailableException e) {
                log.info("Turnstile lock store: {}", StoreUrls.redact(url));
                if (Boolean.TRUE.equals(props.getStore().getFailFast())) {
                    throw new TurnstileStartupException("turnstile.store.fail-fast is set and the lock store "
                            + StoreUrls.redact(url) + " cannot be reached: " + e.getMessage(), "make the store reachable, "
                            + "or unset turnstile.store.fail-fast to start anyway and let the health indicator report it", e);
                }
                log.error("lock store {} cannot be reached at start-up; locked runs are skipped until it is back: {}",
                        StoreUrls.redact(url), e.getMessage());
                return new LazyUrlLockStore(url);
            }
            return checked(store, props, () -> "Set turnstile.store.url=…?turnstile.createTable=true to create the table, "
                    + "or create it with the DDL that 'turnstile schema --store <url>' prints.");
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.turnstile.jdbc.JdbcLockStore")
    @ConditionalOnSingleCandidate(DataSource.class)
    @ConditionalOnMissingBean({LockStore.class, Turnstile.class})
    static class FromDataSource {

        /**
         * Made after the application's own database initialization (its Flyway or Liquibase, or
         * spring.sql.init scripts), which may be what creates the lock table.
         */
        @Bean(destroyMethod = "close")
        @org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization
        LockStore turnstileLockStore(DataSource dataSource, TurnstileProperties props) {
            TurnstileProperties.Jdbc jdbc = props.getJdbc();
            int poolSize = maximumPoolSize(dataSource);
            if (Boolean.TRUE.equals(jdbc.getNotifyForcedReleases()) && poolSize == 1) {
                // the listener would hold the only connection, and every renewal would wait for it
                throw new TurnstileStartupException("turnstile.jdbc.notify-forced-releases=true needs a connection of "
                        + "its own, but the DataSource's pool has one connection", "raise the pool's maximum size "
                        + "(spring.datasource.hikari.maximum-pool-size) to 2 or more, or unset "
                        + "turnstile.jdbc.notify-forced-releases", null);
            }
            JdbcLockStore.Builder builder = JdbcLockStore.builder(dataSource).createTableIfMissing(jdbc.isCreateTable())
                    .notifyForcedReleases(jdbc.getNotifyForcedReleases() != null ? jdbc.getNotifyForcedReleases()
                            : poolSize >= 3);
            try {
                builder.tableName(jdbc.getTable());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("turnstile.jdbc.table: " + e.getMessage(), e);
            }
            if (jdbc.getFlyway().isEnabled()) {
                TurnstileFlywayMigrations.migrate(dataSource, jdbc.getTable(), jdbc.getFlyway().getHistoryTable());
            }
            // Closing it leaves the application's DataSource open.
            return checked(builder.build(), props, () -> {
                String ddl = ddl(dataSource, jdbc.getTable());
                String table = jdbc.getTable();
                boolean shipped = table.substring(table.indexOf('.') + 1).equalsIgnoreCase("turnstile_locks");
                return "Set turnstile.jdbc.create-table=true to create the table at start"
                        + (shipped ? " (or turnstile.jdbc.flyway.enabled=true to run Turnstile's Flyway migrations)" : "")
                        + (ddl != null ? ", or create it (in your migrations) with:\n" + ddl : ".")
                        + (shipped ? "\n" + MIGRATIONS : "");
            });
        }

        /**
         * The pool's maximum size where the DataSource says (HikariCP's {@code getMaximumPoolSize},
         * found by name so that the starter needs no pool on its class path), else 0.
         */
        static int maximumPoolSize(DataSource dataSource) {
            try {
                Object pool = dataSource.isWrapperFor(DataSource.class) ? dataSource.unwrap(DataSource.class) : dataSource;
                Object size = pool.getClass().getMethod("getMaximumPoolSize").invoke(pool);
                return size instanceof Integer n ? n : 0;
            } catch (ReflectiveOperationException | java.sql.SQLException | RuntimeException e) {
                return 0;
            }
        }
    }
}
