package dev.turnstile.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Defaults for the {@link TurnstileLock} methods of one class: an attribute left empty on the
 * method takes the value given here, and one left empty here takes the {@code turnstile.defaults.*}
 * property. Values take the same forms as on {@link TurnstileLock}, placeholders included.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface TurnstileLockDefaults {

    /**
     * The default {@link TurnstileLock#lockAtMostFor()} of this class's methods.
     *
     * @return a duration, or empty for the application default
     */
    String lockAtMostFor() default "";

    /**
     * The default {@link TurnstileLock#lockAtLeastFor()} of this class's methods.
     *
     * @return a duration, or empty for the application default
     */
    String lockAtLeastFor() default "";
}
