package dev.turnstile.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method under a named Turnstile lock, once across every instance that shares
 * the store: a call that finds the lock held elsewhere is skipped (logged at DEBUG) and returns
 * {@code null}, or {@link java.util.Optional#empty()} for a method that returns {@code Optional}.
 * Works the same on {@code @Scheduled} methods and on plain calls through the Spring proxy (a call
 * from inside the same bean, {@code this.method()}, bypasses the proxy and is not locked, as with
 * {@code @Transactional}). The run goes through {@link dev.turnstile.job.JobRunner}, so
 * {@link dev.turnstile.job.LockAssert} and {@link dev.turnstile.job.JobContext} work inside the
 * method, keep-alive and the store-failure policy apply, and registered
 * {@link dev.turnstile.job.JobInterceptor}s wrap it.
 *
 * <p>Attribute values may use property placeholders ({@code ${...}}), resolved once at start-up.
 * Durations take Spring Boot's forms: {@code 500ms}, {@code 10s}, {@code 5m}, {@code 2h},
 * {@code 1d}, ISO-8601 {@code PT10S}, or a bare number of milliseconds. An attribute left empty
 * falls back to the class's {@link TurnstileLockDefaults}, then to the {@code turnstile.defaults.*}
 * properties.
 *
 * <p>A method returning a primitive other than {@code void} is refused at start-up: a skipped run
 * has no value to return. Bad values (a blank name, a duration that does not parse,
 * {@code lockAtLeastFor} longer than {@code lockAtMostFor}, a placeholder with no value, a SpEL
 * syntax error) stop the application from starting with a message that names the method.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface TurnstileLock {

    /**
     * The lock name: 1 to 255 characters, no control characters, no white space at either end.
     * Placeholders ({@code ${app.job-name}}) are resolved at start-up. Parts written as
     * {@code #{...}} are SpEL, evaluated on every call, for names that depend on the arguments:
     * {@code "invoice-#{#customerId}"} (the parameter by name; compile with {@code -parameters},
     * as Spring Boot's build plugins do), {@code "invoice-#{#p0}"} (by position), {@code #root} is
     * the target bean and {@code @beanName} any bean; their properties and instance methods may be
     * used. A name that evaluates to empty or invalid fails that call with an
     * {@link IllegalArgumentException} naming the method.
     *
     * <p>Only this attribute's own text is SpEL: a placeholder's value is text, never parsed, so a
     * property or environment variable holding {@code #{...}} cannot run code. The expressions run
     * in a read-only context: no {@code T(...)} types and no constructors (refused at start-up), no
     * static methods, no assignment. A placeholder inside {@code #{...}} is refused at start-up.
     *
     * @return the lock name, or a template of it
     */
    String name();

    /**
     * How long the lock is held at most if the method never returns (the lease's TTL); empty for
     * the default. With {@code turnstile.defaults.keep-alive=true} it is renewed every third of it
     * while the method runs.
     *
     * @return a duration such as {@code 10m}, {@code PT10M} or {@code ${app.job.ttl}}
     */
    String lockAtMostFor() default "";

    /**
     * How long the lock stays held at least, counted from the acquire, even if the method returns
     * sooner: other instances whose clocks tick slightly later do not run the same tick again.
     * Empty for the default.
     *
     * @return a duration such as {@code 30s}, at most {@code lockAtMostFor}
     */
    String lockAtLeastFor() default "";
}
