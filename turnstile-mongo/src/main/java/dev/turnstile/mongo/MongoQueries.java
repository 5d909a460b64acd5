package dev.turnstile.mongo;

import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import org.bson.Document;
import org.bson.conversions.Bson;

/**
 * Every filter and update the Mongo store sends, in one place. One document per lock:
 *
 * <pre>{@code
 * { _id: "<lock name>", owner: "host/pid/id", token: "<random>", fence: NumberLong(n),
 *   lockedAt: ISODate(..),   // server clock at the acquire ($currentDate)
 *   renewedAt: ISODate(..),  // server clock at the last acquire, extend or release ($currentDate)
 *   ttlMs: NumberLong(..),   // lease length counted from renewedAt
 *   minHoldMs: NumberLong(..) } // lockAtLeastFor counted from lockedAt (set by release)
 * }</pre>
 *
 * <p>The lease ends at {@code lockUntil = max(renewedAt + ttlMs, lockedAt + minHoldMs)}. That moment
 * is never computed by a client: every filter compares it with {@code $$NOW}, the server's clock,
 * inside {@code $expr}, and every time stamp is written by {@code $currentDate}. (Storing
 * {@code lockUntil} itself would need an update pipeline, {@code $set: {lockUntil: {$add: ["$$NOW",
 * ttl]}}}; the test server cannot run update pipelines, and this form needs nothing beyond
 * MongoDB 4.2's {@code $$NOW}, so it is the one form, tested, and the one shipped.)
 *
 * <p>A release or a forced release only ends the lease, so the fence ({@code $inc}) keeps rising.
 * Pruning ({@code MongoLockStore#pruneUnused}) deletes the documents of names unused for a period,
 * after raising the <em>floor</em> document ({@link #FENCE_FLOOR_ID}) to their highest fence. A new
 * document is inserted with {@code fenceUnset: true}; its holder then sets the fence to floor + 1 (read
 * after the insert, so after any delete that let the insert happen) and removes the flag. A holder that
 * dies before that leaves the flag for the next holder, so no holder is handed a fence at or below a
 * pruned one. Deleting a document by hand (not by pruning) restarts its fence above the floor only.
 */
@SuppressWarnings("JavaUtilDate") // a BSON date is a java.util.Date in the driver
final class MongoQueries {
    private MongoQueries() {}

    static final String OWNER = "owner";
    static final String TOKEN = "token";
    static final String FENCE = "fence";
    static final String LOCKED_AT = "lockedAt";
    static final String RENEWED_AT = "renewedAt";
    static final String TTL = "ttlMs";
    static final String MIN_HOLD = "minHoldMs";
    /** Set on insert: the fence is not set yet; the holder sets it above the floor and removes this. */
    static final String FENCE_UNSET = "fenceUnset";
    /** The floor document: at least the highest fence of every pruned name. No lock name has a control character. */
    static final String FENCE_FLOOR_ID = "\u0001fence-floor";

    /** {@code lockUntil}, as an aggregation expression over the document. */
    private static final Document LOCK_UNTIL = new Document("$max", java.util.List.of(
            new Document("$add", java.util.List.of("$" + RENEWED_AT, "$" + TTL)),
            new Document("$add", java.util.List.of("$" + LOCKED_AT, "$" + MIN_HOLD))));

    /** The lease has ended by the server's clock (a missing document matches too, through the upsert). */
    private static final Document EXPIRED = new Document("$expr", new Document("$lte", java.util.List.of(LOCK_UNTIL, "$$NOW")));

    /** The lease is running by the server's clock. */
    static final Document RUNNING = new Document("$expr", new Document("$gt", java.util.List.of(LOCK_UNTIL, "$$NOW")));

    /**
     * Acquire filter, used with upsert: the named lock whose lease has ended. A running lease does
     * not match, so the upsert tries to insert a second document with the same {@code _id} and the
     * server refuses it with a duplicate-key error, which the store reports as busy.
     */
    static Bson acquireFilter(String name) {
        return new Document("_id", name).append("$expr", EXPIRED.get("$expr"));
    }

    /** Acquire update: take the lock, stamp both times with the server's clock, bump the fence. */
    static Bson acquireUpdate(String owner, String token, Duration ttl) {
        return new Document("$set", new Document(OWNER, owner).append(TOKEN, token).append(TTL, ttl.toMillis()).append(MIN_HOLD, 0L))
                .append("$currentDate", new Document(LOCKED_AT, true).append(RENEWED_AT, true))
                .append("$inc", new Document(FENCE, 1L))
                .append("$setOnInsert", new Document(FENCE_UNSET, true));
    }

    /** The floor document. */
    static Bson floor() {
        return new Document("_id", FENCE_FLOOR_ID);
    }

    /** Raises the floor (with upsert): to at least {@code fence}. */
    static Bson raiseFloor(long fence) {
        return new Document("$max", new Document(FENCE, fence));
    }

    /** The holder's document whose fence is not set yet. */
    static Bson fenceUnsetHeldBy(String name, String token) {
        return new Document("_id", name).append(TOKEN, token).append(FENCE_UNSET, true);
    }

    /** Sets the first fence and removes the flag. */
    static Bson setFirstFence(long fence) {
        return new Document("$set", new Document(FENCE, fence)).append("$unset", new Document(FENCE_UNSET, ""));
    }

    /**
     * Lock documents whose lease ended at least {@code unusedFor} ago by the server's clock (the
     * floor document never matches). With {@code names}, only those; with {@code maxFence}, only
     * fences up to it.
     */
    static Bson unusedFor(Duration unusedFor, java.util.@org.jspecify.annotations.Nullable List<String> names, long maxFence) {
        Document id = names == null ? new Document("$ne", FENCE_FLOOR_ID) : new Document("$in", names);
        Document filter = new Document("_id", id).append("$expr", new Document("$lte", java.util.List.of(
                new Document("$add", java.util.List.of(LOCK_UNTIL, unusedFor.toMillis())), "$$NOW")));
        if (maxFence >= 0) {
            filter.append(FENCE, new Document("$lte", maxFence));
        }
        return filter;
    }

    /** The named lock while {@code token} holds a running lease: extend and release. */
    static Bson heldBy(String name, String token) {
        return new Document("_id", name).append(TOKEN, token).append("$expr", RUNNING.get("$expr"));
    }

    /** The named lock while anyone holds a running lease: forced release. */
    static Bson running(String name) {
        return new Document("_id", name).append("$expr", RUNNING.get("$expr"));
    }

    /** Extend: the lease ends {@code ttl} from the server's now (earlier or later than before). */
    static Bson extendUpdate(Duration ttl) {
        return new Document("$set", new Document(TTL, ttl.toMillis()).append(MIN_HOLD, 0L))
                .append("$currentDate", new Document(RENEWED_AT, true));
    }

    /** Release: the lease ends now, or at {@code lockedAt + lockAtLeastFor} if that is later. */
    static Bson releaseUpdate(Duration lockAtLeastFor) {
        return new Document("$set", new Document(TTL, 0L).append(MIN_HOLD, lockAtLeastFor.toMillis()))
                .append("$currentDate", new Document(RENEWED_AT, true));
    }

    /** Forced release: the lease ends now, whatever {@code lockAtLeastFor} was. */
    static Bson forceReleaseUpdate() {
        return releaseUpdate(Duration.ZERO);
    }

    /** When the lease of a document read back from the server ends, by the server's clock. */
    static Instant lockUntil(Document d) {
        long renewed = d.getDate(RENEWED_AT).getTime() + number(d, TTL);
        long held = d.getDate(LOCKED_AT).getTime() + number(d, MIN_HOLD);
        return Instant.ofEpochMilli(Math.max(renewed, held));
    }

    static Instant lockedAt(Document d) {
        Date at = d.getDate(LOCKED_AT);
        return at.toInstant();
    }

    static long number(Document d, String field) {
        Object v = d.get(field);
        if (v instanceof Number n) {
            return n.longValue();
        }
        throw new IllegalStateException("lock document '" + d.get("_id") + "' has no number in field '" + field
                + "': it was not written by Turnstile");
    }
}
