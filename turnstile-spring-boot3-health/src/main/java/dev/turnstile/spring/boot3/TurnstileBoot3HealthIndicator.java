package dev.turnstile.spring.boot3;

import dev.turnstile.Turnstile;
import java.util.List;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/**
 * Health of the lock store on Spring Boot 3 ({@code management.health.turnstile.enabled}): UP when
 * listing the held locks succeeds (one cheap read), with the store's description and lock counts;
 * DOWN with the error otherwise. The same checks as the starter's Spring Boot 4 indicator.
 */
public class TurnstileBoot3HealthIndicator implements HealthIndicator {
    private final Turnstile turnstile;

    /**
     * Creates the indicator.
     *
     * @param turnstile the client whose store is checked
     */
    public TurnstileBoot3HealthIndicator(Turnstile turnstile) {
        this.turnstile = turnstile;
    }

    @Override
    public Health health() {
        String store = turnstile.store().description();
        try {
            List<?> locks = turnstile.heldLocks();
            return Health.up().withDetail("store", store).withDetail("locks", locks.size())
                    .withDetail("heldByThisInstance", turnstile.heldLeases().size()).build();
        } catch (RuntimeException e) {
            return Health.down(e).withDetail("store", store).build();
        }
    }
}
