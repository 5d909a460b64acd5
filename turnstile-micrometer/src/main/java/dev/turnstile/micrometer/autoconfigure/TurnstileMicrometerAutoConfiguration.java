package dev.turnstile.micrometer.autoconfigure;

import dev.turnstile.Turnstile;
import dev.turnstile.micrometer.DefaultTurnstileJobObservationConvention;
import dev.turnstile.micrometer.ObservingJobInterceptor;
import dev.turnstile.micrometer.TurnstileJobObservationConvention;
import dev.turnstile.micrometer.TurnstileMeters;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Registers Turnstile's Micrometer meters and job observation in a Spring Boot application that has
 * Micrometer: a {@link TurnstileMeters} bean (a {@code TurnstileListener}, which the Turnstile
 * starter adds to its client, and a {@code MeterBinder}, which Spring Boot binds to the
 * application's registry) that counts the leases of every {@link Turnstile} bean, and an
 * {@link ObservingJobInterceptor} bean (a {@code JobInterceptor}, which the starter adds to its job
 * runner) when an {@link ObservationRegistry} bean exists. A bean of the user's own of either type
 * wins. Switches: {@code turnstile.metrics.enabled}, {@code turnstile.metrics.lock-name-tag},
 * {@code turnstile.metrics.observation}.
 */
@AutoConfiguration(afterName = {
        // Spring Boot 4, then 3.x: the ObservationRegistry bean must be defined before the condition reads it.
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration"})
@ConditionalOnClass({MeterRegistry.class, Turnstile.class})
@ConditionalOnBooleanProperty(name = "turnstile.metrics.enabled", matchIfMissing = true)
@EnableConfigurationProperties(TurnstileMicrometerProperties.class)
public class TurnstileMicrometerAutoConfiguration {

    /** Created by Spring. */
    public TurnstileMicrometerAutoConfiguration() {}

    /**
     * Turnstile's meters.
     *
     * @param properties {@code turnstile.metrics.*}
     * @return the meters, bound by Spring Boot to the application's registry
     */
    @Bean
    @ConditionalOnMissingBean
    public TurnstileMeters turnstileMeters(TurnstileMicrometerProperties properties) {
        return TurnstileMeters.builder().lockNameTag(properties.isLockNameTag()).build();
    }

    /**
     * Points the held-leases gauge at every {@link Turnstile} bean once all singletons exist (looked
     * up then, not injected, because the Turnstile bean is built with the meters as its listener).
     *
     * @param meters the meters
     * @param turnstiles the application's clients
     * @return the callback
     */
    @Bean
    public static SmartInitializingSingleton turnstileMetersMonitor(
            ObjectProvider<TurnstileMeters> meters, ObjectProvider<Turnstile> turnstiles) {
        return () -> meters.ifAvailable(m -> turnstiles.orderedStream().forEach(m::monitor));
    }

    /** The job observation, where an ObservationRegistry exists. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObservationRegistry.class)
    @ConditionalOnBean(ObservationRegistry.class)
    @ConditionalOnBooleanProperty(name = "turnstile.metrics.observation", matchIfMissing = true)
    public static class JobObservationConfiguration {

        /** Created by Spring. */
        public JobObservationConfiguration() {}

        /**
         * Observes each locked job run.
         *
         * @param registry the application's observation registry
         * @param convention a convention bean of the user's, if any
         * @param properties {@code turnstile.metrics.*}
         * @return the interceptor the starter adds to its job runner
         */
        @Bean
        @ConditionalOnMissingBean
        public ObservingJobInterceptor observingJobInterceptor(ObservationRegistry registry,
                ObjectProvider<TurnstileJobObservationConvention> convention, TurnstileMicrometerProperties properties) {
            return new ObservingJobInterceptor(registry, convention.getIfAvailable(
                    () -> new DefaultTurnstileJobObservationConvention(properties.isLockNameTag())));
        }
    }
}
