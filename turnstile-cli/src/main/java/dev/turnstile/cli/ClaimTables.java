package dev.turnstile.cli;

import dev.turnstile.claim.ClaimStore;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.TaskClaimer;
import dev.turnstile.console.Printable;
import dev.turnstile.jdbc.JdbcClaimStore;
import dev.turnstile.jdbc.JdbcLockStore;
import dev.turnstile.mongo.MongoClaimStore;
import dev.turnstile.mongo.MongoLockStore;
import dev.turnstile.spi.LockStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** {@code turnstile console --claim-table}: task tables named on the command line, opened beside the lock store. */
final class ClaimTables {
    private ClaimTables() {}

    /** Parses {@code TABLE} or {@code TABLE:id=COL,phase=COL,locked-at=COL,updated-at=COL,version=COL}. */
    static List<ClaimTable> parse(List<String> specs) {
        List<ClaimTable> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (String spec : specs) {
            int colon = spec.indexOf(':');
            String name = colon < 0 ? spec : spec.substring(0, colon);
            ClaimTable.Builder b = checked(spec, () -> ClaimTable.builder(name));
            if (colon >= 0) {
                Set<String> given = new HashSet<>();
                for (String part : spec.substring(colon + 1).split(",", -1)) {
                    int eq = part.indexOf('=');
                    String key = eq < 0 ? part : part.substring(0, eq).strip().toLowerCase(Locale.ROOT);
                    if (eq < 0 || !given.add(key)) {
                        throw new IllegalArgumentException("--claim-table '" + Printable.of(spec) + "': "
                                + (eq < 0 ? "'" + Printable.of(part) + "' is not COLUMN=NAME" : "'" + Printable.of(key) + "' is given twice")
                                + "; write TABLE:id=COL,phase=COL,locked-at=COL,updated-at=COL,version=COL (any of them)");
                    }
                    String column = part.substring(eq + 1).strip();
                    checked(spec, () -> switch (key) {
                        case "id" -> b.idColumn(column);
                        case "phase" -> b.phaseColumn(column);
                        case "locked-at" -> b.lockedAtColumn(column);
                        case "updated-at" -> b.updatedAtColumn(column);
                        case "version" -> b.versionColumn(column);
                        default -> throw new IllegalArgumentException("'" + key + "' is not a column role: use id, phase, "
                                + "locked-at, updated-at or version");
                    });
                }
            }
            ClaimTable table = checked(spec, b::build);
            if (!names.add(table.table().toLowerCase(Locale.ROOT))) {
                throw new IllegalArgumentException("--claim-table '" + table.table() + "' is given twice: give each table once");
            }
            out.add(table);
        }
        return out;
    }

    /** A step of building a table from a spec; its refusal names the spec, with what the user typed made printable. */
    private static <T> T checked(String spec, java.util.function.Supplier<T> step) {
        try {
            return step.get();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--claim-table '" + Printable.of(spec) + "': "
                    + Printable.of(String.valueOf(e.getMessage())), e);
        }
    }

    /** A duration as the options take it: whole seconds, or milliseconds under a second (no overflow). */
    private static String shown(Duration d) {
        return d.compareTo(Duration.ofSeconds(1)) < 0 && !d.isNegative() ? d.toMillis() + "ms" : d.toSeconds() + "s";
    }

    static void checkTimes(Duration claimTimeout, @Nullable Duration stuckAfter) {
        if (claimTimeout.compareTo(Duration.ofMillis(1)) < 0 || claimTimeout.compareTo(Duration.ofDays(366)) > 0) {
            throw new IllegalArgumentException("--claim-timeout " + shown(claimTimeout) + ": give the claimers' lock "
                    + "timeout, 1ms to 366d");
        }
        if (stuckAfter != null && (stuckAfter.compareTo(Duration.ofSeconds(1)) < 0 || stuckAfter.compareTo(Duration.ofDays(366)) > 0)) {
            throw new IllegalArgumentException("--stuck-after " + shown(stuckAfter) + ": give 1s to 366d");
        }
    }

    /**
     * Opens a claim store per table over the lock store's own connections, each checked against its
     * table (a missing table or column fails here, with the statement that adds it).
     */
    static List<TaskClaimer> open(LockStore lockStore, List<ClaimTable> tables, Duration claimTimeout) {
        List<TaskClaimer> out = new ArrayList<>();
        try {
            for (ClaimTable t : tables) {
                ClaimStore store;
                if (lockStore instanceof JdbcLockStore jdbc) {
                    store = JdbcClaimStore.builder(jdbc, t).build();
                } else if (lockStore instanceof MongoLockStore mongo) {
                    store = MongoClaimStore.builder(mongo, t).build();
                } else {
                    throw new IllegalArgumentException("--claim-table '" + t.table() + "': task tables live in a SQL database "
                            + "or MongoDB, and this store keeps none (Redis, Redlock, ZooKeeper): give --store the database "
                            + "that holds the table");
                }
                out.add(TaskClaimer.builder(store).lockTimeout(claimTimeout).build());
            }
            return out;
        } catch (RuntimeException e) {
            out.forEach(TaskClaimer::close);
            throw e;
        }
    }
}
