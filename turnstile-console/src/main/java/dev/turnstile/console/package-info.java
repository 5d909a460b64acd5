/**
 * The Turnstile console: web pages that show the locks a store holds and, when actions are
 * enabled, force-release one behind a confirmation, with an audit record of who did it.
 *
 * <p>{@link dev.turnstile.console.Console} renders the pages from a {@link
 * dev.turnstile.console.ConsoleRequest}; it knows no web framework. {@link
 * dev.turnstile.console.ConsoleServer} serves it on the JDK's own HTTP server with a token for
 * actions ({@code turnstile console}); the Spring Boot starter serves it inside an application,
 * behind the application's own Spring Security.
 *
 * <p>Nothing here is null unless marked {@code @Nullable} (JSpecify; checked by NullAway in the build).
 */
@NullMarked
package dev.turnstile.console;

import org.jspecify.annotations.NullMarked;
