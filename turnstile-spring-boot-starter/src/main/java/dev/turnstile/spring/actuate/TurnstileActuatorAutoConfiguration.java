package dev.turnstile.spring.actuate;

import dev.turnstile.Turnstile;
import dev.turnstile.spring.TurnstileAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code turnstile} Actuator endpoint and, on Spring Boot 4, the store's health indicator
 * (Spring Boot 3's is in {@code turnstile-spring-boot3-health}, which the starter brings along).
 * Each part loads only when its Actuator classes are on the class path.
 */
@AutoConfiguration(after = TurnstileAutoConfiguration.class)
@ConditionalOnBean(Turnstile.class)
public class TurnstileActuatorAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public TurnstileActuatorAutoConfiguration() {}

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.springframework.boot.actuate.endpoint.annotation.Endpoint",
            "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"})
    static class EndpointConfiguration {

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnAvailableEndpoint(endpoint = TurnstileEndpoint.class)
        TurnstileEndpoint turnstileEndpoint(Turnstile turnstile) {
            return new TurnstileEndpoint(turnstile);
        }
    }

    /** Spring Boot 4: the health API lives in {@code org.springframework.boot.health}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.springframework.boot.health.contributor.HealthIndicator",
            "org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator"})
    @ConditionalOnEnabledHealthIndicator("turnstile")
    static class Boot4HealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "turnstileHealthIndicator")
        TurnstileHealthIndicator turnstileHealthIndicator(Turnstile turnstile) {
            return new TurnstileHealthIndicator(turnstile);
        }
    }
}
