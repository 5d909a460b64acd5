package dev.turnstile.micrometer;

import dev.turnstile.jdbc.JdbcLockStore;
import dev.turnstile.jdbc.SqlDialect;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import org.postgresql.ds.PGSimpleDataSource;

/** Real stores for the tests: an SQLite file per call, and a PostgreSQL address where nothing listens (no connection until the first call). */
final class Stores {
    private Stores() {}

    static String sqliteUrl() {
        try {
            return "jdbc:sqlite:" + Files.createTempDirectory("turnstile-micrometer").resolve("locks.db");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static LockStore sqlite(String url) {
        return LockStores.open(url);
    }

    /** Connection refused at once: every call fails with StoreUnavailableException. */
    static LockStore unreachable() {
        PGSimpleDataSource nowhere = new PGSimpleDataSource();
        nowhere.setURL("jdbc:postgresql://127.0.0.1:1/test?user=postgres&connectTimeout=2");
        return JdbcLockStore.builder(nowhere).dialect(SqlDialect.POSTGRESQL).build();
    }
}
