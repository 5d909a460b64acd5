package dev.turnstile.spi;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Builds stores from URLs ({@code jdbc:postgresql://…}, {@code redis://…}). Found with
 * {@link java.util.ServiceLoader}; used by the CLI and by {@link LockStores#open(String)}.
 */
public interface LockStoreFactory {

    /**
     * Returns the URL prefixes this factory understands, for error messages.
     *
     * @return for example {@code ["jdbc:sqlite:", "jdbc:postgresql:"]}
     */
    List<String> schemes();

    /**
     * Tells whether this factory understands the URL: its scheme is one of {@link #schemes()},
     * ignoring case.
     *
     * @param url a store URL
     * @return {@code true} if {@link #open} accepts its scheme
     */
    default boolean supports(String url) {
        String u = url.toLowerCase(java.util.Locale.ROOT);
        return schemes().stream().anyMatch(u::startsWith);
    }

    /**
     * Tells whether a store opened from this URL lives inside one process only (an in-memory
     * database), so it cannot exclude anything between processes. The CLI refuses such stores.
     *
     * @param url a store URL whose scheme this factory supports
     * @return the reason, for a message, or {@code null} if other processes share the store
     */
    default @Nullable String processLocalReason(String url) {
        return null;
    }

    /**
     * Opens a store, with the options given in the URL. The store owns what it creates and frees it
     * on {@link LockStore#close()}.
     *
     * @param url a store URL whose scheme this factory supports
     * @return the store
     * @throws IllegalArgumentException if the URL is malformed (the message says how)
     * @throws dev.turnstile.StoreUnavailableException if the store cannot be reached
     */
    LockStore open(String url);

    /**
     * Returns the DDL that creates what the store needs, for {@code turnstile schema}; empty when
     * the store needs none.
     *
     * @param url a store URL whose scheme this factory supports
     * @return the DDL, or an empty string
     * @throws IllegalArgumentException if the URL is malformed
     */
    default String schema(String url) {
        return "";
    }

    /**
     * Creates what the store needs (the DDL of {@link #schema}), idempotently. Stores that need
     * nothing do nothing.
     *
     * @param url a store URL whose scheme this factory supports
     * @throws IllegalArgumentException if the URL is malformed
     * @throws dev.turnstile.StoreUnavailableException if the store cannot be reached or refuses
     */
    default void applySchema(String url) {}
}
