package dev.turnstile.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/** Opens stores by URL through the {@link LockStoreFactory} implementations on the class path. */
public final class LockStores {
    private LockStores() {}

    /**
     * Finds the factory for a URL.
     *
     * @param url the store URL
     * @return the factory that supports it
     * @throws IllegalArgumentException if the URL is blank or no factory supports its scheme; the
     *     message lists the supported schemes (never the URL's password)
     */
    public static LockStoreFactory factoryFor(String url) {
        if (url == null || url.isBlank()) {
            throw new IllegalArgumentException("store URL is empty: give one such as jdbc:sqlite:/path/locks.db");
        }
        List<String> known = new ArrayList<>();
        for (LockStoreFactory f : ServiceLoader.load(LockStoreFactory.class, LockStores.class.getClassLoader())) {
            if (f.supports(url)) {
                return f;
            }
            known.addAll(f.schemes());
        }
        throw new IllegalArgumentException("unknown store URL '" + StoreUrls.redact(url) + "': supported schemes are "
                + (known.isEmpty() ? "none (no store module on the class path)" : String.join(", ", known)));
    }

    /**
     * Opens a store by URL.
     *
     * @param url the store URL
     * @return the store, which the caller closes
     * @throws IllegalArgumentException if the URL is unknown or malformed, including a user info
     *     that drivers would split in different places (an unencoded {@code @} or {@code /} in the
     *     password); no message shows the password
     * @throws dev.turnstile.StoreUnavailableException if the store cannot be reached
     */
    public static LockStore open(String url) {
        LockStoreFactory factory = factoryFor(url);
        checkUserInfo(url);
        return factory.open(url);
    }

    /**
     * Refuses a URL whose {@code user:password@} part drivers would read differently (an unencoded
     * {@code @}, {@code /}, {@code ?} or {@code #} in it), before any driver sees and echoes it.
     *
     * @param url the store URL
     * @throws IllegalArgumentException if the user info is ambiguous; the message hides the password
     */
    public static void checkUserInfo(String url) {
        String problem = StoreUrls.ambiguousUserInfo(url);
        if (problem != null) {
            throw new IllegalArgumentException("store URL '" + StoreUrls.redact(url) + "': " + problem);
        }
    }
}
