package dev.turnstile.micrometer;

import dev.turnstile.job.JobContext;
import dev.turnstile.job.JobInterceptor;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;

/**
 * Wraps each locked job run in an {@link Observation} (a timer and, with a tracing bridge, a span):
 * started once the lock is held, stopped when the job returns or throws, with the job's exception
 * recorded as the observation's error. Runs that were skipped (busy, store down) are not observed
 * here: {@link TurnstileMeters} counts them. Register it with
 * {@code JobRunner.builder(turnstile).interceptor(new ObservingJobInterceptor(registry))}; the
 * Spring Boot auto-configuration does so when an {@link ObservationRegistry} bean exists.
 *
 * <p>Names and key values: {@link DefaultTurnstileJobObservationConvention}, replaceable by a
 * {@link TurnstileJobObservationConvention}. The observation is current (in scope) while the job
 * runs, so spans and observations the job opens are its children.
 */
public final class ObservingJobInterceptor implements JobInterceptor {
    private static final TurnstileJobObservationConvention DEFAULT = new DefaultTurnstileJobObservationConvention();

    private final ObservationRegistry registry;
    private final @Nullable TurnstileJobObservationConvention convention;

    /**
     * Observes with the default convention.
     *
     * @param registry where observations go
     * @throws IllegalArgumentException if {@code registry} is null
     */
    public ObservingJobInterceptor(ObservationRegistry registry) {
        this(registry, null);
    }

    /**
     * Observes with a convention of the caller's.
     *
     * @param registry where observations go
     * @param convention names and key values; null for the default
     * @throws IllegalArgumentException if {@code registry} is null
     */
    public ObservingJobInterceptor(ObservationRegistry registry, @Nullable TurnstileJobObservationConvention convention) {
        if (registry == null) {
            throw new IllegalArgumentException(
                    "registry must not be null: give the application's ObservationRegistry (ObservationRegistry.NOOP to observe nothing)");
        }
        this.registry = registry;
        this.convention = convention;
    }

    @Override
    @SuppressWarnings("try") // the scope is opened for what it does: the observation is current while the job runs
    public <T> T around(JobContext ctx, Callable<T> run) throws Exception {
        TurnstileJobObservationContext context = new TurnstileJobObservationContext(ctx);
        Observation observation = Observation.createNotStarted(convention, DEFAULT, () -> context, registry).start();
        try (Observation.Scope scope = observation.openScope()) {
            return run.call();
        } catch (Exception | Error e) {
            observation.error(e);
            throw e;
        } finally {
            // Key values are read at stop, so turnstile.lease.lost says how the run ended.
            observation.stop();
        }
    }
}
