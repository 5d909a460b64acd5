/**
 * The receiving side of fencing over HTTP: {@link dev.turnstile.spring.fence.FencedRequestFilter}
 * refuses requests that carry a stale fence, and its auto-configuration
 * ({@code turnstile.fencing.http.*}).
 */
@NullMarked
package dev.turnstile.spring.fence;

import org.jspecify.annotations.NullMarked;
