package dev.turnstile.cli;

import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
    String url;

    // Read by TurnstileCommand.main before any logger exists; declared here so every subcommand accepts it.
    @Option(names = "--verbose", description = "Log debug details to stderr.")
    boolean verbose;

    /** Resolves the URL without touching the file system. */
    String resolve(TurnstileCommand top) {
        if (url != null) {
            return url;
        }
        String fromEnv = top.env().get("TURNSTILE_STORE");
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

    /** Opens the store; for the embedded default, creates its directory first. */
    LockStore open(TurnstileCommand top) {
        String resolved = resolve(top);
        LockStores.factoryFor(resolved); // an unknown scheme fails here, before anything is created
        if (isEmbedded(top)) {
            try {
                Files.createDirectories(embeddedFile(top).getParent());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create the state directory " + embeddedFile(top).getParent(), e);
            }
        }
        return LockStores.open(resolved);
    }

}
