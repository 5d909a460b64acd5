package dev.turnstile.cli;

import dev.turnstile.jdbc.JdbcLockStoreFactory;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStoreFactory;
import dev.turnstile.spi.LockStores;
import dev.turnstile.spi.StoreUrls;
import java.io.IOException;
import java.time.Duration;
import java.util.Locale;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Option;

/**
 * The options every subcommand shares: {@code --verbose}, and {@code --store}, which resolves to the
 * flag, else {@code TURNSTILE_STORE}, else the embedded SQLite file under the user's state directory.
 */
final class StoreOption {
    @Option(names = "--store", paramLabel = "URL",
            description = "Store URL, e.g. jdbc:postgresql://db/app?user=u. Default: $TURNSTILE_STORE, "
                    + "else the embedded SQLite file $XDG_STATE_HOME/turnstile/locks.db "
                    + "(~/.local/state/turnstile/locks.db). Prefer the environment variable for URLs with passwords.")
    @Nullable String url;

    // Read by TurnstileCommand.main before any logger exists; declared here so every subcommand accepts it.
    @Option(names = "--verbose", description = "Log debug details to stderr.")
    boolean verbose;

    /** Resolves the URL without touching the file system, and keeps its secrets out of all output. */
    String resolve(TurnstileCommand top) {
        String fromEnv = top.env().get("TURNSTILE_STORE");
        top.secrets().addUrl(fromEnv);
        if (url != null) {
            top.secrets().addUrl(url);
            return url;
        }
        if (fromEnv != null && !fromEnv.isBlank()) {
            return fromEnv;
        }
        return "jdbc:sqlite:" + embeddedFile(top);
    }

    boolean isEmbedded(TurnstileCommand top) {
        return resolve(top).equals("jdbc:sqlite:" + embeddedFile(top));
    }

    static Path embeddedFile(TurnstileCommand top) {
        String state = top.env().get("XDG_STATE_HOME");
        Path base = state != null && !state.isBlank() ? Path.of(state)
                : Path.of(top.env().getOrDefault("HOME", System.getProperty("user.home")), ".local", "state");
        return base.resolve("turnstile").resolve("locks.db");
    }

    /** How a subcommand uses the store. */
    enum Use {
        /** {@code run}: may create the embedded file; SQLite waits for a locked file up to the wait. */
        RUN,
        /** {@code locks}, {@code release}: never create a store, and fail promptly on a locked file. */
        READ,
        /** {@code console}: as {@link #READ}, and it never creates the lock table either (it runs for long, and only reads). */
        CONSOLE,
        /** {@code schema --apply}. */
        SCHEMA,
        /** {@code prune}: as {@link #CONSOLE}, but SQLite waits up to 5 s for another process's write, as it deletes. */
        PRUNE
    }

    /** Opens the store for {@code run} and {@code schema}; for the embedded default, creates its directory first. */
    LockStore open(TurnstileCommand top) {
        return Objects.requireNonNull(open(top, Use.SCHEMA, Duration.ZERO), "only READ opens no store");
    }

    /**
     * Opens the store for a use.
     *
     * @param wait for {@link Use#RUN}: how long SQLite may wait for a file another process has
     *     locked (at least one second, so that short write transactions of other runs do not fail)
     * @return the store, or {@code null} for {@link Use#READ}, {@link Use#CONSOLE} or {@link Use#PRUNE} of an embedded default that does not
     *     exist yet (no lock was ever taken there)
     */
    @Nullable LockStore open(TurnstileCommand top, Use use, Duration wait) {
        String resolved = resolve(top);
        LockStoreFactory factory = LockStores.factoryFor(resolved); // an unknown scheme fails here, before anything is created
        LockStores.checkUserInfo(resolved);
        String processLocal = factory.processLocalReason(resolved);
        if (processLocal != null) {
            throw new IllegalArgumentException("store URL '" + StoreUrls.redact(resolved) + "': " + processLocal
                    + "; it cannot exclude other processes: give a file path or a server");
        }
        if (resolved.toLowerCase(Locale.ROOT).startsWith("jdbc:sqlite:")) {
            checkAbsolute(resolved);
            if (use == Use.READ || use == Use.CONSOLE || use == Use.PRUNE) {
                if (isEmbedded(top) && !Files.exists(embeddedFile(top))) {
                    return null;
                }
                resolved = withOption(resolved, "turnstile.createFile", "false");
                resolved = withOption(resolved, "turnstile.busyTimeout", use == Use.PRUNE ? "5s" : "1s");
            } else if (use == Use.RUN) {
                long ms = Math.max(1000, Math.min(wait.toMillis(), 999_999_999L));
                resolved = withOption(resolved, "turnstile.busyTimeout", ms + "ms");
            }
        }
        if ((use == Use.CONSOLE || use == Use.PRUNE) && resolved.toLowerCase(Locale.ROOT).startsWith("jdbc:")) {
            resolved = withOption(resolved, "turnstile.createTable", "false");
        }
        if (isEmbedded(top)) {
            try {
                Files.createDirectories(embeddedFile(top).getParent());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create the state directory " + embeddedFile(top).getParent(), e);
            }
        }
        return LockStores.open(resolved);
    }

    /**
     * A relative SQLite path resolves against the working directory: cron (in {@code $HOME}) and a
     * shell elsewhere would each lock a file of their own, and exclude nothing.
     */
    private static void checkAbsolute(String url) {
        // the path SQLite opens: file:%2Ftmp%2Fx.db is absolute, and file://localhost/dev/null is /dev/null
        String path = JdbcLockStoreFactory.sqliteFile(url);
        if (!path.isEmpty() && !path.startsWith("/") && !path.startsWith(":memory:")) {
            String absolute;
            try {
                absolute = Path.of(path).toAbsolutePath().normalize().toString();
            } catch (java.nio.file.InvalidPathException e) {
                absolute = "/full/path/" + path;
            }
            throw new IllegalArgumentException("store URL 'jdbc:sqlite:" + path + "': a relative path is resolved against "
                    + "the working directory, so cron (started in $HOME) and a shell elsewhere would lock different files; "
                    + "give the absolute path, e.g. jdbc:sqlite:" + absolute);
        }
    }

    /** Adds a Turnstile option to a SQLite URL unless the user already gave it (theirs wins). */
    private static String withOption(String url, String key, String value) {
        if (url.contains(key + "=")) {
            return url;
        }
        return url + (url.contains("?") ? "&" : "?") + key + "=" + value;
    }

}
