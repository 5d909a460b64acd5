package dev.turnstile.micrometer;

import dev.turnstile.job.JobContext;
import io.micrometer.observation.Observation;

/**
 * The {@link Observation.Context} of one locked job run, for {@link TurnstileJobObservationConvention}s
 * and observation handlers: the running job (name, lease, fence, loss).
 */
public final class TurnstileJobObservationContext extends Observation.Context {
    private final JobContext job;

    /**
     * Creates the context of one run.
     *
     * @param job the running job
     * @throws IllegalArgumentException if {@code job} is null
     */
    public TurnstileJobObservationContext(JobContext job) {
        if (job == null) {
            throw new IllegalArgumentException("job must not be null: give the JobContext of the running job");
        }
        this.job = job;
    }

    /**
     * Returns the running job.
     *
     * @return the job's context: name, lease, fence, whether its lease was lost
     */
    public JobContext job() {
        return job;
    }
}
