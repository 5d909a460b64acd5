package dev.turnstile.job;

import java.util.concurrent.Callable;

/**
 * Wraps each locked run: called on the job's thread while the lease is held, after the lock was
 * taken and before it is released, so it can time the run, open a tracing span or an
 * {@code Observation}, or set a logging context. Registered with
 * {@link JobRunner.Builder#interceptor}; the first registered is the outermost.
 *
 * <p>An interceptor must call {@code run.call()} exactly once and return its value (or rethrow
 * its exception); not calling it skips the job while its lock is held.
 */
@FunctionalInterface
public interface JobInterceptor {

    /**
     * Runs {@code run} (the job, or the next interceptor) in whatever context this interceptor adds.
     *
     * @param ctx the running job: name, lease and fence, loss flag
     * @param run the rest of the chain
     * @param <T> the job's value type
     * @return what {@code run} returned
     * @throws Exception what {@code run} threw, or the interceptor's own failure
     */
    <T> T around(JobContext ctx, Callable<T> run) throws Exception;
}
