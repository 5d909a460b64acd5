package dev.turnstile.spring;

import dev.turnstile.Turnstile;
import dev.turnstile.TurnstileListener;
import dev.turnstile.job.JobInterceptor;
import dev.turnstile.job.JobListener;
import dev.turnstile.job.JobOptions;
import dev.turnstile.job.JobRunner;
import dev.turnstile.spi.LockStore;
import java.util.List;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.core.env.Environment;

/**
 * Auto-configures Turnstile for Spring Boot 4.1 and 3.5: a {@link LockStore} (from
 * {@code turnstile.store.url}, else the application's {@code DataSource}, else its Lettuce Redis
 * connection), a {@link Turnstile} and a {@link JobRunner} over it, the {@link TurnstileLock}
 * advice, and a {@link TurnstileLifecycle} that releases held leases on shutdown. Every
 * {@link TurnstileListener} bean is registered on the Turnstile and every {@link JobInterceptor}
 * bean on the JobRunner, in {@code @Order} order. An application's own {@link LockStore},
 * {@link Turnstile} or {@link JobRunner} bean replaces the auto-configured one.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration", // Boot 4
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration", // Boot 3
        "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration", // Boot 4
        "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration"}) // Boot 3
@ConditionalOnProperty(prefix = "turnstile", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(TurnstileProperties.class)
@Import({TurnstileStoreConfigurations.FromUrl.class, TurnstileStoreConfigurations.FromDataSource.class,
        TurnstileRedisStoreConfiguration.class})
public class TurnstileAutoConfiguration {

    static final String NO_STORE = "Turnstile has no lock store: set turnstile.store.url (e.g. jdbc:postgresql://db:5432/app "
            + "or redis://cache:6379), or give the application a DataSource (with turnstile-jdbc on the class path) or a "
            + "Lettuce Redis connection (with turnstile-redis), or define a LockStore bean; turnstile.enabled=false turns "
            + "Turnstile off";

    /** Creates the auto-configuration; Spring calls it. */
    public TurnstileAutoConfiguration() {}

    /**
     * The client every locked method uses.
     *
     * @param stores the store beans (exactly one is expected)
     * @param props the properties
     * @param listeners every listener bean, registered in order
     * @param customizers builder customizers, applied last
     * @return the client, closed (releasing what it holds) with the context
     * @throws IllegalStateException if there is no store, or more than one
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Turnstile turnstile(ObjectProvider<LockStore> stores, TurnstileProperties props,
            ObjectProvider<TurnstileListener> listeners, ObjectProvider<TurnstileBuilderCustomizer> customizers) {
        List<LockStore> all = stores.orderedStream().toList();
        if (all.isEmpty()) {
            throw new IllegalStateException(NO_STORE);
        }
        LockStore store = stores.getIfUnique();
        if (store == null) {
            throw new IllegalStateException("Turnstile found " + all.size() + " LockStore beans: mark the one to use "
                    + "@Primary, or define a Turnstile bean");
        }
        Turnstile.Builder builder = Turnstile.builder(store);
        if (props.getOwner() != null) {
            try {
                builder.owner(props.getOwner());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("turnstile.owner: " + e.getMessage(), e);
            }
        }
        listeners.orderedStream().forEach(builder::listener);
        customizers.orderedStream().forEach(c -> c.customize(builder));
        return builder.build();
    }

    /**
     * Runs the locked methods, with the {@code turnstile.defaults.*} options.
     *
     * @param turnstile the client
     * @param props the properties
     * @param interceptors every interceptor bean, registered in order (the first is the outermost)
     * @param listeners every job listener bean (e.g. the console's job history), in order
     * @param customizers builder customizers, applied last
     * @return the runner
     * @throws IllegalArgumentException if the defaults are invalid (the message names the property)
     */
    @Bean
    @ConditionalOnMissingBean
    public JobRunner turnstileJobRunner(Turnstile turnstile, TurnstileProperties props,
            ObjectProvider<JobInterceptor> interceptors, ObjectProvider<JobListener> listeners,
            ObjectProvider<JobRunnerBuilderCustomizer> customizers) {
        JobRunner.Builder builder = JobRunner.builder(turnstile).defaults(defaults(props.getDefaults()));
        interceptors.orderedStream().forEach(builder::interceptor);
        listeners.orderedStream().forEach(builder::listener);
        customizers.orderedStream().forEach(c -> c.customize(builder));
        return builder.build();
    }

    static JobOptions defaults(TurnstileProperties.Defaults d) {
        JobOptions.Builder b = JobOptions.builder();
        set("turnstile.defaults.lock-at-most-for", () -> b.lockAtMostFor(d.getLockAtMostFor()));
        set("turnstile.defaults.lock-at-least-for", () -> b.lockAtLeastFor(d.getLockAtLeastFor()));
        b.keepAlive(d.isKeepAlive());
        set("turnstile.defaults.on-store-unavailable", () -> b.onStoreUnavailable(d.getOnStoreUnavailable()));
        try {
            return b.build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("turnstile.defaults: " + e.getMessage(), e);
        }
    }

    private static void set(String property, Runnable setter) {
        try {
            setter.run();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(property + ": " + e.getMessage(), e);
        }
    }

    /**
     * Releases held leases on a graceful shutdown.
     *
     * @param turnstile the client
     * @param props the properties
     * @return the lifecycle
     */
    @Bean
    @ConditionalOnMissingBean
    public TurnstileLifecycle turnstileLifecycle(Turnstile turnstile, TurnstileProperties props) {
        return new TurnstileLifecycle(turnstile, props.getShutdown().getAwaitRunning());
    }

    /**
     * Proxies the beans with {@link TurnstileLock} methods. Static, as bean post-processors must
     * be; what it needs is looked up lazily.
     *
     * @param runner the job runner, looked up at the first locked method
     * @param lifecycle the lifecycle, looked up at the first call
     * @param env resolves placeholders
     * @param beanFactory resolves {@code @bean} references in SpEL names
     * @return the post-processor
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static TurnstileLockPostProcessor turnstileLockPostProcessor(ObjectProvider<JobRunner> runner,
            ObjectProvider<TurnstileLifecycle> lifecycle, Environment env, BeanFactory beanFactory) {
        return new TurnstileLockPostProcessor(new LockedMethodInterceptor(runner::getObject, lifecycle::getObject, env,
                beanFactory));
    }
}
