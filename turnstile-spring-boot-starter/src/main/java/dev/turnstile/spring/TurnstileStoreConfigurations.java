package dev.turnstile.spring;

import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import dev.turnstile.jdbc.JdbcLockStore;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import dev.turnstile.spi.StoreUrls;
import javax.sql.DataSource;
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

    /** Probes a store when fail-fast is asked for; otherwise the health indicator reports it. */
    static LockStore checked(LockStore store, TurnstileProperties props) {
        if (props.getStore().isFailFast()) {
            try {
                store.heldLocks();
            } catch (RuntimeException e) {
                store.close();
                throw new IllegalStateException("turnstile.store.fail-fast is set and the lock store " + store.description()
                        + " cannot be used: " + e.getMessage() + " (fix the store or its settings, or unset fail-fast "
                        + "to start anyway and let the health indicator report it)", e);
            }
        }
        return store;
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "turnstile.store", name = "url")
    @ConditionalOnMissingBean({LockStore.class, Turnstile.class})
    static class FromUrl {

        @Bean(destroyMethod = "close")
        LockStore turnstileLockStore(TurnstileProperties props) {
            String url = props.getStore().getUrl().trim();
            try {
                LockStores.factoryFor(url);
                LockStores.checkUserInfo(url);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("turnstile.store.url: " + e.getMessage(), e);
            }
            LockStore store;
            try {
                store = LockStores.open(url);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("turnstile.store.url: " + e.getMessage(), e);
            } catch (StoreUnavailableException e) {
                if (props.getStore().isFailFast()) {
                    throw new IllegalStateException("turnstile.store.fail-fast is set and the lock store "
                            + StoreUrls.redact(url) + " cannot be reached: " + e.getMessage(), e);
                }
                log.error("lock store {} cannot be reached at start-up; locked runs are skipped until it is back: {}",
                        StoreUrls.redact(url), e.getMessage());
                return new LazyUrlLockStore(url);
            }
            return checked(store, props);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.turnstile.jdbc.JdbcLockStore")
    @ConditionalOnSingleCandidate(DataSource.class)
    @ConditionalOnMissingBean({LockStore.class, Turnstile.class})
    static class FromDataSource {

        @Bean(destroyMethod = "close")
        LockStore turnstileLockStore(DataSource dataSource, TurnstileProperties props) {
            TurnstileProperties.Jdbc jdbc = props.getJdbc();
            JdbcLockStore.Builder builder = JdbcLockStore.builder(dataSource).createTableIfMissing(jdbc.isCreateTable())
                    .notifyForcedReleases(jdbc.getNotifyForcedReleases() != null ? jdbc.getNotifyForcedReleases()
                            : maximumPoolSize(dataSource) >= 3);
            try {
                builder.tableName(jdbc.getTable());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("turnstile.jdbc.table: " + e.getMessage(), e);
            }
            // Closing it leaves the application's DataSource open.
            return checked(builder.build(), props);
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
