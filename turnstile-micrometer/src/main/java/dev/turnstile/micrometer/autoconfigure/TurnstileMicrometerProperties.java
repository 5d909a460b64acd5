package dev.turnstile.micrometer.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code turnstile.metrics.*}: what the Micrometer auto-configuration registers.
 */
@ConfigurationProperties("turnstile.metrics")
public class TurnstileMicrometerProperties {
    /** Whether to register Turnstile's meters (turnstile.acquire, turnstile.leases.held, ...). */
    private boolean enabled = true;
    /**
     * Whether meters and job observations carry the lock name as a tag. Turn it off when lock names
     * are dynamic (a SpEL name per entity or request): each distinct name is a time series.
     */
    private boolean lockNameTag = true;
    /** Whether to wrap each locked job run in an Observation named turnstile.job. */
    private boolean observation = true;

    /** {@return whether Turnstile's meters are registered} */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets whether Turnstile's meters are registered.
     *
     * @param enabled whether Turnstile's meters are registered
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** {@return whether meters and observations carry the lock name} */
    public boolean isLockNameTag() {
        return lockNameTag;
    }

    /**
     * Sets whether meters and observations carry the lock name.
     *
     * @param lockNameTag whether meters and observations carry the lock name
     */
    public void setLockNameTag(boolean lockNameTag) {
        this.lockNameTag = lockNameTag;
    }

    /** {@return whether each locked job run is observed} */
    public boolean isObservation() {
        return observation;
    }

    /**
     * Sets whether each locked job run is observed.
     *
     * @param observation whether each locked job run is observed
     */
    public void setObservation(boolean observation) {
        this.observation = observation;
    }
}
