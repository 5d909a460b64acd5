package dev.turnstile.spring.actuate;

import dev.turnstile.Turnstile;
import java.util.List;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * Health of the lock store, for Spring Boot 4 ({@code management.health.turnstile.enabled}): UP
 * when listing the held locks succeeds (one cheap read), with the store's description and lock
 * counts; DOWN with the error otherwise. An unreachable store at start-up shows here rather than
 * stopping the application (unless {@code turnstile.store.fail-fast} is set).
 */
public class TurnstileHealthIndicator implements HealthIndicator {
    private final Turnstile turnstile;

    /**
     * Creates the indicator.
     *
     * @param turnstile the client whose store is checked
     */
    public TurnstileHealthIndicator(Turnstile turnstile) {
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
