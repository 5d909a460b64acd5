package dev.turnstile.spring;

import dev.turnstile.job.JobRunner;

/**
 * Customizes the auto-configured {@link JobRunner} before it is built. Interceptors need no
 * customizer: every {@link dev.turnstile.job.JobInterceptor} bean is registered on it, in
 * {@link org.springframework.core.annotation.Order} order (the first is the outermost).
 */
@FunctionalInterface
public interface JobRunnerBuilderCustomizer {

    /**
     * Customizes the builder.
     *
     * @param builder the builder, with the defaults and interceptors already set
     */
    void customize(JobRunner.Builder builder);
}
