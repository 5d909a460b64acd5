package dev.turnstile.micrometer;

import io.micrometer.common.KeyValues;

/**
 * The default names and key values of a locked job run's observation:
 * <ul>
 *   <li>name {@value #NAME} (so its timer is {@code turnstile.job} and its span "turnstile job
 *       &lt;lock&gt;");</li>
 *   <li>low-cardinality {@code turnstile.lock} (the lock name; leave it out with
 *       {@code new DefaultTurnstileJobObservationConvention(false)} when job names are dynamic) and
 *       {@code turnstile.lease.lost} ({@code true} when the lease was lost while the job ran);</li>
 *   <li>high-cardinality {@code turnstile.fence} (the lease's fence: for traces, never for metrics).</li>
 * </ul>
 * An exception thrown by the job is recorded on the observation (the metrics handler adds the
 * {@code error} key).
 */
public class DefaultTurnstileJobObservationConvention implements TurnstileJobObservationConvention {
    /** The observation's name. */
    public static final String NAME = "turnstile.job";

    private final boolean lockNameKey;

    /** The default: with the lock name as a low-cardinality key value. */
    public DefaultTurnstileJobObservationConvention() {
        this(true);
    }

    /**
     * A convention with or without the lock name as a low-cardinality key value.
     *
     * @param lockNameKey {@code false} to leave {@code turnstile.lock} out (dynamic lock names)
     */
    public DefaultTurnstileJobObservationConvention(boolean lockNameKey) {
        this.lockNameKey = lockNameKey;
    }

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(TurnstileJobObservationContext context) {
        return lockNameKey ? "turnstile job " + context.job().name() : "turnstile job";
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(TurnstileJobObservationContext context) {
        KeyValues lost = KeyValues.of("turnstile.lease.lost", Boolean.toString(context.job().leaseLost()));
        return lockNameKey ? lost.and("turnstile.lock", context.job().name()) : lost;
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(TurnstileJobObservationContext context) {
        return KeyValues.of("turnstile.fence", Long.toString(context.job().fence()));
    }
}
