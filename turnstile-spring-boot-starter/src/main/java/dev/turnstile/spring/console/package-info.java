/**
 * The Turnstile console inside a Spring Boot application: {@link
 * dev.turnstile.spring.console.TurnstileConsoleProperties} ({@code turnstile.console.*}) and the
 * servlet that serves the console's pages behind the application's own Spring Security.
 *
 * <p>Nothing here is null unless marked {@code @Nullable} (JSpecify; checked by NullAway in the build).
 */
@NullMarked
package dev.turnstile.spring.console;

import org.jspecify.annotations.NullMarked;
