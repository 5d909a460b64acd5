package dev.turnstile.examples.scheduled;

import dev.turnstile.Lease;
import dev.turnstile.Turnstile;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * Takes and releases a throw-away lock once at start-up, before the scheduler's first tick (Spring
 * starts {@code @Scheduled} tasks after every singleton is ready). A JVM's first acquire connects
 * to the store and loads the locking code, and can take longer than the job's
 * {@code lockAtLeastFor}; done on a tick, it would let another instance run the same tick again
 * (README.md, "Exactly once per tick").
 */
@Component
class StoreWarmUp implements SmartInitializingSingleton {
    private final Turnstile turnstile;
    private final String name;

    StoreWarmUp(Turnstile turnstile, @Value("${example.lock-name:example-tick}") String lock) {
        this.turnstile = turnstile;
        this.name = lock + ".warm-up";
    }

    @Override
    public void afterSingletonsInstantiated() {
        // Busy (another instance warming up) is as good: the store was reached either way.
        turnstile.tryAcquire(name).ifPresent(Lease::release);
    }
}
