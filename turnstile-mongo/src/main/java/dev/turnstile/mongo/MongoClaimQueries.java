package dev.turnstile.mongo;

import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimTable;
import java.time.Duration;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.bson.Document;

/**
 * Every filter, update, sort and index of {@link MongoClaimStore}, in one place. One document per
 * task, in the application's own collection; the field names come from the {@link ClaimTable}
 * (defaults shown):
 *
 * <pre>{@code
 * { id: "gw-17",                        // the key (or _id)
 *   phase: "Deleting",                  // and any other declared filter fields
 *   locked_at: ISODate(..),             // server clock at the claim ($currentDate); epoch when free
 *   updated_at: ISODate(..),            // server clock at the last unlock or moveTo ($currentDate)
 *   claim_version: NumberLong(n) }      // raised by every claim ($inc): the guard of every write
 * }</pre>
 *
 * <p>Time is the server's: "due" is {@code locked_at <= $$NOW - lockTimeout} inside {@code $expr},
 * and every time stamp is written by {@code $currentDate}. A document without {@code locked_at} or
 * {@code claim_version} (inserted by the application without them) is due at once and gets both on
 * its first claim.
 *
 * <p>Relock needs a time computed from the server's now ({@code now - timeout + delay}). MongoDB 4.2+
 * could do it in one update pipeline, but the test server (mongo-java-server) cannot run update
 * pipelines; so relock is two guarded writes: the first stamps {@code locked_at} with the server's
 * now ({@code $currentDate}, like a heartbeat) and returns the document, the second sets the due time
 * computed by {@link #relockedAt} from the two server time stamps it returned. No client clock is
 * read; between the two writes the task is simply still claimed.
 */
@SuppressWarnings("JavaUtilDate") // a BSON date is a java.util.Date in the driver
final class MongoClaimQueries {
    /** {@code locked_at} of a free task: the epoch, so it sorts first and is always due. */
    static final Date EPOCH = new Date(0);

    private MongoClaimQueries() {}

    /**
     * Claim filter: the filter's equalities (field names as the table declares them, since MongoDB
     * field names are case-sensitive), and {@code locked_at <= $$NOW - timeout} by the server's clock.
     */
    static Document claimFilter(ClaimTable t, ClaimFilter filter, Duration lockTimeout) {
        Document d = new Document();
        for (Map.Entry<String, Object> e : filter.conditions().entrySet()) {
            d.append(declared(t, e.getKey()), e.getValue());
        }
        return d.append("$expr", new Document("$lte", List.of("$" + t.lockedAtColumn(), sinceNow(lockTimeout))));
    }

    /** Claim order: oldest {@code locked_at} first (free tasks are at the epoch), then oldest {@code updated_at}. */
    static Document claimSort(ClaimTable t) {
        return new Document(t.lockedAtColumn(), 1).append(t.updatedAtColumn(), 1);
    }

    /** Claim update: {@code locked_at} to the server's now, version raised. */
    static Document claimUpdate(ClaimTable t) {
        return new Document("$currentDate", new Document(t.lockedAtColumn(), true))
                .append("$inc", new Document(t.versionColumn(), 1L));
    }

    /** What a claim returns: the key, the version and {@code locked_at}. */
    static Document claimProjection(ClaimTable t) {
        return new Document(t.idColumn(), 1).append(t.versionColumn(), 1).append(t.lockedAtColumn(), 1);
    }

    /** The guard of every later write: this task, still at the version this claim set. */
    static Document guard(ClaimTable t, Object key, long version) {
        return new Document(t.idColumn(), key).append(t.versionColumn(), version);
    }

    /** Heartbeat, and the first step of a relock: {@code locked_at} to the server's now. */
    static Document heartbeatUpdate(ClaimTable t) {
        return new Document("$currentDate", new Document(t.lockedAtColumn(), true));
    }

    /** What the first step of a relock returns: the two server time stamps the delay is computed from. */
    static Document relockProjection(ClaimTable t) {
        return new Document(t.lockedAtColumn(), 1).append(t.updatedAtColumn(), 1);
    }

    /**
     * The relock's due time, stored as {@code locked_at = now - timeout + delay} so the claim filter
     * finds the task due exactly at {@code now + delay}; {@code delay} is a tenth of the time waited
     * since {@code updated_at}, at least {@code floor} and at most {@code timeout}. {@code now} and
     * {@code updated_at} are both the server's time stamps, read back from the first step. An
     * {@code updated_at} that was never set (missing, null, not a date, or at or before the epoch)
     * counts as no wait, so the delay is the floor, as on the SQL stores, whose column defaults to 0.
     */
    static Date relockedAt(Document stamped, ClaimTable t, Duration floor, Duration lockTimeout) {
        long now = stamped.getDate(t.lockedAtColumn()).getTime();
        Object updated = stamped.get(t.updatedAtColumn());
        long waited = updated instanceof Date u && u.getTime() > 0 ? Math.max(0, now - u.getTime()) : 0;
        long delay = Math.min(lockTimeout.toMillis(), Math.max(floor.toMillis(), waited / 10));
        return new Date(now - lockTimeout.toMillis() + delay);
    }

    /** Second step of a relock: the due time computed by {@link #relockedAt}. */
    static Document relockUpdate(ClaimTable t, Date lockedAt) {
        return new Document("$set", new Document(t.lockedAtColumn(), lockedAt));
    }

    /** Unlock and moveTo: the given fields, {@code locked_at} to the epoch, {@code updated_at} to the server's now. */
    static Document unlockUpdate(ClaimTable t, Map<String, Object> values) {
        Document set = new Document(values).append(t.lockedAtColumn(), EPOCH);
        return new Document("$set", set).append("$currentDate", new Document(t.updatedAtColumn(), true));
    }

    /** Update: the given fields, the claim kept. */
    static Document updateUpdate(Map<String, Object> values) {
        return new Document("$set", new Document(values));
    }

    /** The guard of an operator's release: the task as the summary showed it (version, not free, same updated_at). */
    static Document releaseGuard(ClaimTable t, Object key, long version, Date updatedAt) {
        return guard(t, key, version).append(t.lockedAtColumn(), new Document("$gt", EPOCH)).append(t.updatedAtColumn(), updatedAt);
    }

    /** An operator's release: {@code locked_at} to the epoch (due at once) and the version raised; {@code updated_at} left alone. */
    static Document releaseUpdate(ClaimTable t) {
        return new Document("$set", new Document(t.lockedAtColumn(), EPOCH)).append("$inc", new Document(t.versionColumn(), 1L));
    }

    /**
     * Per phase, in one aggregation (so one {@code $$NOW} judges every task): {@code {_id: phase, n,
     * claimed, overdue, oldest}}, where claimed is {@code locked_at} after now minus the timeout
     * (held, or waiting out a back-off), overdue is after the epoch and at or before it, and oldest
     * the least overdue {@code locked_at}; ordered by phase, at most {@code limit} phases.
     */
    static List<Document> summary(ClaimTable t, Duration lockTimeout, int limit) {
        String lockedAt = "$" + t.lockedAtColumn();
        Document claimed = new Document("$gt", List.of(lockedAt, sinceNow(lockTimeout)));
        Document overdue = new Document("$and", List.of(new Document("$gt", List.of(lockedAt, EPOCH)),
                new Document("$lte", List.of(lockedAt, sinceNow(lockTimeout)))));
        Document group = new Document("_id", "$" + t.phaseColumn())
                .append("n", new Document("$sum", 1))
                .append("claimed", new Document("$sum", new Document("$cond", List.of(claimed, 1, 0))))
                .append("overdue", new Document("$sum", new Document("$cond", List.of(overdue, 1, 0))))
                .append("oldest", new Document("$min", new Document("$cond", java.util.Arrays.asList(overdue, lockedAt, null))));
        return List.of(new Document("$group", group), new Document("$sort", new Document("_id", 1)),
                new Document("$limit", limit));
    }

    /** Not free, and {@code updated_at} set and at or before the server's now minus {@code stuckAfter}. */
    static Document stuckMatch(ClaimTable t, Duration stuckAfter) {
        return new Document("$expr", new Document("$and", List.of(
                new Document("$gt", List.of("$" + t.lockedAtColumn(), EPOCH)),
                new Document("$gt", List.of("$" + t.updatedAtColumn(), EPOCH)),
                new Document("$lte", List.of("$" + t.updatedAtColumn(), sinceNow(stuckAfter))))));
    }

    /** Stuck tasks, the longest without progress first. */
    static Document stuckSort(ClaimTable t) {
        return new Document(t.updatedAtColumn(), 1).append(t.lockedAtColumn(), 1);
    }

    private static Document sinceNow(Duration d) {
        return new Document("$subtract", List.of("$$NOW", d.toMillis()));
    }

    /** The claiming index: the filter fields, then {@code locked_at} and {@code updated_at} (the sort). */
    static Document claimIndexKeys(ClaimTable t) {
        Document keys = new Document();
        t.filterColumns().forEach(c -> keys.append(c, 1));
        return keys.append(t.lockedAtColumn(), 1).append(t.updatedAtColumn(), 1);
    }

    /** The key's unique index, which every guarded write looks the task up by (none needed for {@code _id}). */
    static Document idIndexKeys(ClaimTable t) {
        return new Document(t.idColumn(), 1);
    }

    static String claimIndexName(ClaimTable t) {
        return t.table() + "_claim_idx";
    }

    static String idIndexName(ClaimTable t) {
        return t.table() + "_" + t.idColumn() + "_uidx";
    }

    /** The indexes claiming needs, as {@code mongosh} commands the validation's message prints. */
    static String createIndexCommand(ClaimTable t, boolean claimIndex, boolean idIndex) {
        StringBuilder b = new StringBuilder();
        String coll = "db.getCollection(\"" + t.table() + "\")";
        if (claimIndex) {
            b.append(coll).append(".createIndex(").append(shell(claimIndexKeys(t))).append(", {name: \"")
                    .append(claimIndexName(t)).append("\"})");
        }
        if (idIndex) {
            if (b.length() > 0) {
                b.append('\n');
            }
            b.append(coll).append(".createIndex(").append(shell(idIndexKeys(t))).append(", {name: \"")
                    .append(idIndexName(t)).append("\", unique: true})");
        }
        return b.toString();
    }

    private static String shell(Document keys) {
        StringBuilder b = new StringBuilder("{");
        keys.forEach((k, v) -> b.append(b.length() > 1 ? ", " : "").append(k).append(": ").append(v));
        return b.append('}').toString();
    }

    /** The filter field as the table declares it (the core checks filters case-insensitively, as SQL does). */
    private static String declared(ClaimTable t, String column) {
        return t.filterColumns().stream().filter(column::equalsIgnoreCase).findFirst().orElse(column);
    }
}
