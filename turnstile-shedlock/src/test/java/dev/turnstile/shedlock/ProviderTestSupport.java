package dev.turnstile.shedlock;

import dev.turnstile.LockInfo;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStores;
import java.nio.file.Files;
import java.nio.file.Path;

/** Where the bridge's tests keep their locks: a table or key prefix of their own on the real servers. */
final class ProviderTestSupport {
    static final String POSTGRES = System.getProperty("turnstile.test.postgres", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres")
            + "&turnstile.table=turnstile_shedlock_it&turnstile.createTable=true";
    static final String REDIS = System.getProperty("turnstile.test.redis", "redis://127.0.0.1:6379")
            + "?turnstile.prefix=turnstile-shedlock-it:";

    private ProviderTestSupport() {}

    static String sqlite() {
        try {
            Path dir = Files.createTempDirectory("turnstile-shedlock");
            return "jdbc:sqlite:" + dir.resolve("locks.db") + "?turnstile.createTable=true";
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static Turnstile open(String url) {
        return Turnstile.builder(LockStores.open(url)).build();
    }

    /** Read from the store itself, by its clock: the lock is held by someone and not expired. */
    static boolean held(Turnstile turnstile, String name) {
        return turnstile.heldLocks().stream().map(LockInfo::name).anyMatch(name::equals);
    }
}
