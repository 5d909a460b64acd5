package dev.turnstile.spi;

/** A subscription to a lock's releases, from {@link NotifiesReleases#watchReleases}. Closing it twice is harmless. */
public interface ReleaseWatch extends AutoCloseable {
    /** The handle of a store that cannot notify: there is nothing to close. */
    ReleaseWatch NONE = () -> {};

    /** Stops the notifications. */
    @Override
    void close();
}
