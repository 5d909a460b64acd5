package dev.turnstile.spi;

import org.jspecify.annotations.Nullable;

/** Told by a store that a lock was released, for {@link NotifiesReleases#watchReleases}. */
@FunctionalInterface
public interface ReleaseListener {
    /**
     * Called on any thread when a lease on the watched name ends, possibly spuriously. Must return
     * quickly: stores call it on their I/O threads.
     *
     * @param token the released lease's token when the store knows it, so that a client can tell
     *     the echo of its own release from someone else's; {@code null} when it does not (a forced
     *     release, an expiry)
     */
    void released(@Nullable String token);
}
