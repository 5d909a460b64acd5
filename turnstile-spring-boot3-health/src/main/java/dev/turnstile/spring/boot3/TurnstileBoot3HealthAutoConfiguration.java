package dev.turnstile.spring.boot3;

import dev.turnstile.Turnstile;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Registers {@link TurnstileBoot3HealthIndicator} as the {@code turnstile} health contributor on
 * Spring Boot 3, where {@code org.springframework.boot.actuate.health.HealthIndicator} exists; on
 * Spring Boot 4 the condition fails before this class is loaded, and the starter's own indicator
 * takes its place.
 */
@AutoConfiguration(afterName = "dev.turnstile.spring.TurnstileAutoConfiguration")
@ConditionalOnClass(name = {"org.springframework.boot.actuate.health.HealthIndicator",
        "org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator"})
@ConditionalOnBean(Turnstile.class)
@ConditionalOnEnabledHealthIndicator("turnstile")
public class TurnstileBoot3HealthAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public TurnstileBoot3HealthAutoConfiguration() {}

    /**
     * The store's health indicator.
     *
     * @param turnstile the client whose store is checked
     * @return the indicator
     */
    @Bean
    @ConditionalOnMissingBean(name = "turnstileHealthIndicator")
    public TurnstileBoot3HealthIndicator turnstileHealthIndicator(Turnstile turnstile) {
        return new TurnstileBoot3HealthIndicator(turnstile);
    }
}
