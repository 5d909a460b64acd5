package dev.turnstile.micrometer.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.Lease;
import dev.turnstile.Turnstile;
import dev.turnstile.TurnstileListener;
import dev.turnstile.micrometer.ObservingJobInterceptor;
import dev.turnstile.micrometer.TurnstileMeters;
import dev.turnstile.testing.InMemoryLockStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The auto-configuration in a Spring context. The Turnstile bean here stands in for the starter's:
 * built with every TurnstileListener bean, as the starter builds its own.
 */
class TurnstileMicrometerAutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(TurnstileMicrometerAutoConfiguration.class))
            .withUserConfiguration(StarterLikeTurnstile.class);

    @Configuration(proxyBeanMethods = false)
    static class StarterLikeTurnstile {
        @Bean(destroyMethod = "close")
        Turnstile turnstile(ObjectProvider<TurnstileListener> listeners) {
            Turnstile.Builder b = Turnstile.builder(new InMemoryLockStore());
            listeners.orderedStream().forEach(b::listener);
            return b.build();
        }
    }

    @Test
    void isListedForSpringBootToFind() {
        List<String> candidates = ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).getCandidates();
        assertThat(candidates).contains(TurnstileMicrometerAutoConfiguration.class.getName());
    }

    @Test
    void theMetersListenToTheTurnstileAndCountItsLeases() {
        runner.run(context -> {
            TurnstileMeters meters = context.getBean(TurnstileMeters.class);
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            meters.bindTo(registry); // what Spring Boot's metrics auto-configuration does with MeterBinder beans
            Turnstile turnstile = context.getBean(Turnstile.class);

            Lease lease = turnstile.tryAcquire("nightly").orElseThrow();
            assertThat(registry.get(TurnstileMeters.ACQUIRE).tags("lock", "nightly", "outcome", "acquired").timer().count()).isEqualTo(1);
            assertThat(registry.get(TurnstileMeters.LEASES_HELD).gauge().value()).isEqualTo(1.0);
            lease.release();
            assertThat(registry.get(TurnstileMeters.LEASES_HELD).gauge().value()).isZero();
            assertThat(context).doesNotHaveBean(ObservingJobInterceptor.class); // no ObservationRegistry
        });
    }

    @Test
    void theLockNameTagCanBeTurnedOff() {
        runner.withPropertyValues("turnstile.metrics.lock-name-tag=false").run(context -> {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            context.getBean(TurnstileMeters.class).bindTo(registry);
            context.getBean(Turnstile.class).tryAcquire("invoice-17").orElseThrow().release();
            assertThat(registry.get(TurnstileMeters.ACQUIRE).timer().getId().getTag("lock")).isNull();
        });
    }

    @Test
    void anObservationRegistryBringsTheJobObservation() {
        runner.withBean(ObservationRegistry.class, ObservationRegistry::create)
                .run(context -> assertThat(context).hasSingleBean(ObservingJobInterceptor.class));
        runner.withBean(ObservationRegistry.class, ObservationRegistry::create)
                .withPropertyValues("turnstile.metrics.observation=false")
                .run(context -> assertThat(context).doesNotHaveBean(ObservingJobInterceptor.class).hasSingleBean(TurnstileMeters.class));
    }

    @Test
    void canBeTurnedOffAndUserBeansWin() {
        runner.withPropertyValues("turnstile.metrics.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(TurnstileMeters.class));
        TurnstileMeters mine = TurnstileMeters.builder().lockNameTag(false).build();
        runner.withBean("myMeters", TurnstileMeters.class, () -> mine)
                .run(context -> assertThat(context.getBean(TurnstileMeters.class)).isSameAs(mine));
    }
}
