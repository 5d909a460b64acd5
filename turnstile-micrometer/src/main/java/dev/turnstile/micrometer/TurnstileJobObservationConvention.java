package dev.turnstile.micrometer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names a locked job run's {@link Observation} and picks its key values. Implement it (or extend
 * {@link DefaultTurnstileJobObservationConvention}) to rename or retag, and give it to
 * {@link ObservingJobInterceptor}; in Spring Boot, declare it as a bean.
 */
public interface TurnstileJobObservationConvention extends ObservationConvention<TurnstileJobObservationContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof TurnstileJobObservationContext;
    }
}
