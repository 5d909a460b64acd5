package dev.turnstile.mongo;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoNamespace;
import com.mongodb.MongoSecurityException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteException;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import dev.turnstile.LockInfo;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LockStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.bson.Document;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock store in one MongoDB collection, over the application's {@link MongoClient} (the MongoDB
 * Java sync driver). One document per lock, keyed by the lock name; acquire is one
 * {@code findOneAndUpdate} with upsert, release and extend are one owner-checked {@code updateOne}
 * each. Expiry is judged by the server's clock ({@code $$NOW} in {@code $expr}, {@code $currentDate}),
 * never by a client's. The queries are in {@code MongoQueries}; the document, the guarantees and the
 * options, for users, in {@code docs/stores/mongodb.md}.
 *
 * <pre>{@code
 * LockStore store = MongoLockStore.builder(mongoClient, "app").build();
 * }</pre>
 *
 * <p>Needs MongoDB 4.2 or later ({@code $$NOW}); no index beyond {@code _id}. Writes use write concern
 * {@code majority} unless {@link Builder#writeConcern} says otherwise, so a lease survives a failover
 * of a replica set: a lock granted with {@code w:1} can be granted again by a new primary that never
 * saw the first grant.
 *
 * <p>Two contenders inserting the first document of a name at once: one insert wins and the other
 * meets a duplicate-key error, which is reported as busy.
 */
public final class MongoLockStore implements LockStore, dev.turnstile.spi.StoreClock, dev.turnstile.spi.PrunesNames {
    private static final Logger log = LoggerFactory.getLogger(MongoLockStore.class);
    static final String DEFAULT_COLLECTION = "turnstile_locks";
    /** The server's code for a duplicate key (E11000). */
    private static final int DUPLICATE_KEY = 11000;

    /** After a call found no server, the next ones fail at once for this long rather than wait again. */
    private static final long NO_SERVER_PAUSE_NANOS = 1_000_000_000L;

    private final MongoClient client;
    private final MongoCollection<Document> locks;
    private final String description;
    private final @Nullable AutoCloseable owned;
    private volatile boolean closed;
    /** When (nanoTime) a call last found no server to send to, and why; 0 once one has. */
    private volatile long noServerAt;
    private volatile @Nullable String noServerCause;
    /** How long the first call waits for the driver's first look at the servers, so that a refusal is seen. */
    private static final long FIRST_LOOK_MILLIS = 200;
    private volatile boolean firstLook;
    /** Whether a call has reached a server: from then on a refusal is waited out as the driver does. */
    private volatile boolean everAnswered;

    private MongoLockStore(Builder b) {
        this.client = b.client;
        this.locks = b.client.getDatabase(b.database).getCollection(b.collection)
                .withWriteConcern(b.writeConcern).withReadPreference(ReadPreference.primary());
        this.description = (b.description != null ? b.description : "MongoDB database " + b.database)
                + " (collection " + b.collection + ")";
        this.owned = b.owned;
    }

    /**
     * Starts a builder over the application's client.
     *
     * @param client the client; left open by {@link #close()} (a store opened from a URL closes the client it made)
     * @param database the database that holds the lock collection
     * @return a builder
     * @throws IllegalArgumentException if {@code client} is null or {@code database} is not a valid database name
     */
    public static Builder builder(MongoClient client, String database) {
        if (client == null) {
            throw new IllegalArgumentException("client is null: give the application's MongoClient");
        }
        return new Builder(client, checkDatabase(database));
    }

    @Override
    public Optional<Grant> tryAcquire(AcquireRequest r) {
        try {
            Document d = call("acquire lock '" + r.name() + "'", () -> locks.findOneAndUpdate(MongoQueries.acquireFilter(r.name()),
                    MongoQueries.acquireUpdate(r.owner(), r.token(), r.ttl()),
                    new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER)));
            if (d == null || !r.token().equals(d.getString(MongoQueries.TOKEN))) {
                return Optional.empty(); // not expected with upsert and AFTER; never claim a lock we did not write
            }
            Grant grant = new Grant(MongoQueries.number(d, MongoQueries.FENCE), MongoQueries.lockedAt(d), MongoQueries.lockUntil(d));
            return Boolean.TRUE.equals(d.get(MongoQueries.FENCE_UNSET)) ? firstFence(r, grant) : Optional.of(grant);
        } catch (Busy e) {
            log.trace("lock '{}' is held: the upsert met its running document", r.name());
            return Optional.empty();
        }
    }

    /**
     * A new document (or one whose inserter died before setting it) has no fence yet: set it above the
     * floor of pruned names, read now, after the insert (see {@link MongoQueries}). If that fails the
     * lease is given back, so no holder runs with a fence at or below a pruned one.
     */
    private Optional<Grant> firstFence(AcquireRequest r, Grant unset) {
        try {
            Document floor = call("read the fence floor", () -> locks.find(MongoQueries.floor()).first());
            long fence = Math.addExact(floor == null ? 0L : MongoQueries.number(floor, MongoQueries.FENCE), 1L);
            long set = call("set the first fence of lock '" + r.name() + "'", () -> locks.updateOne(
                    MongoQueries.fenceUnsetHeldBy(r.name(), r.token()), MongoQueries.setFirstFence(fence)).getMatchedCount());
            return set == 1 ? Optional.of(new Grant(fence, unset.acquiredAt(), unset.expiresAt())) : Optional.empty();
        } catch (RuntimeException e) {
            try {
                release(r.name(), r.token(), Duration.ZERO);
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
    }

    /**
     * Deletes the documents of names whose lease ended at least {@code unusedFor} ago by the server's
     * clock, {@value #PRUNE_BATCH} at a time: read their fences, raise the floor document to the highest
     * ({@code $max}, upserted), then delete those still unused whose fence is at most that. The floor is
     * raised before the delete, so an insert the delete lets happen reads a floor above the deleted
     * fences. A document taken again in between no longer matches and is kept.
     */
    @Override
    public long pruneUnused(Duration unusedFor) {
        long pruned = 0;
        try {
            while (true) {
                List<String> names = new ArrayList<>(PRUNE_BATCH);
                long highest = 0;
                for (Document d : call("find unused names", () -> locks.find(MongoQueries.unusedFor(unusedFor, null, -1))
                        .projection(Projections.include(MongoQueries.FENCE)).limit(PRUNE_BATCH).into(new ArrayList<>()))) {
                    names.add(d.getString("_id"));
                    highest = Math.max(highest, MongoQueries.number(d, MongoQueries.FENCE));
                }
                if (names.isEmpty()) {
                    return pruned;
                }
                long max = highest;
                call("raise the fence floor", () -> locks.updateOne(MongoQueries.floor(), MongoQueries.raiseFloor(max),
                        new com.mongodb.client.model.UpdateOptions().upsert(true)));
                long deleted = call("prune unused names", () -> locks.deleteMany(MongoQueries.unusedFor(unusedFor, names, max))
                        .getDeletedCount());
                pruned += deleted;
                if (names.size() < PRUNE_BATCH || deleted == 0) {
                    return pruned;
                }
            }
        } catch (StoreUnavailableException e) {
            throw new StoreUnavailableException(e.getMessage() + " (" + pruned + " names pruned before the failure)", e);
        }
    }

    /** Documents read and deleted per round of {@link #pruneUnused}. */
    private static final int PRUNE_BATCH = 500;

    @Override
    public boolean extend(String name, String token, Duration ttl) {
        return call("extend lock '" + name + "'",
                () -> locks.updateOne(MongoQueries.heldBy(name, token), MongoQueries.extendUpdate(ttl)).getMatchedCount()) == 1;
    }

    @Override
    public boolean release(String name, String token, Duration lockAtLeastFor) {
        return call("release lock '" + name + "'",
                () -> locks.updateOne(MongoQueries.heldBy(name, token), MongoQueries.releaseUpdate(lockAtLeastFor)).getMatchedCount()) == 1;
    }

    @Override
    public boolean forceRelease(String name) {
        return call("force-release lock '" + name + "'",
                () -> locks.updateOne(MongoQueries.running(name), MongoQueries.forceReleaseUpdate()).getMatchedCount()) == 1;
    }

    @Override
    public List<LockInfo> heldLocks() {
        List<LockInfo> out = call("list locks", () -> {
            List<LockInfo> found = new ArrayList<>();
            for (Document d : locks.find(MongoQueries.RUNNING).projection(Projections.exclude(MongoQueries.TOKEN))) {
                found.add(new LockInfo(d.getString("_id"), d.getString(MongoQueries.OWNER), MongoQueries.number(d, MongoQueries.FENCE),
                        MongoQueries.lockedAt(d), MongoQueries.lockUntil(d)));
            }
            return found;
        });
        out.sort(Comparator.comparing(LockInfo::name));
        return out;
    }

    /**
     * The server's clock, which every lease time here is written and judged by ({@code $currentDate},
     * {@code $$NOW}): the {@code localTime} of a {@code hello} command ({@code isMaster} where the
     * server does not know {@code hello}).
     */
    @Override
    public java.time.Instant now() {
        Document hello = call("read the clock", () -> {
            try {
                return database().runCommand(new Document("hello", 1));
            } catch (com.mongodb.MongoCommandException e) {
                if (e.getErrorCode() != 59) { // CommandNotFound: a server before 4.4.2 (or a test server) knows isMaster
                    throw e;
                }
                return database().runCommand(new Document("isMaster", 1));
            }
        });
        Object localTime = hello.get("localTime");
        if (localTime instanceof java.util.Date at) {
            return at.toInstant();
        }
        throw new dev.turnstile.StoreUnavailableException("cannot read the clock of " + description
                + ": the server's hello reply has no localTime", null);
    }

    /** The database this store's lock collection is in, for a claim store beside it. */
    MongoDatabase database() {
        return client.getDatabase(locks.getNamespace().getDatabaseName());
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (owned != null) {
            try {
                owned.close();
            } catch (Exception e) {
                throw new StoreUnavailableException("closing " + description + " failed: " + e.getMessage(), e);
            }
        }
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    /** Runs one driver call; a duplicate key becomes {@link Busy}, every other driver failure is unavailability. */
    private <T> T call(String what, Supplier<T> op) {
        if (closed) {
            throw new IllegalStateException("the LockStore " + description + " is closed: build a new one, and keep it open "
                    + "while a Turnstile uses it");
        }
        long failedAt = noServerAt;
        if (failedAt != 0 && System.nanoTime() - failedAt < NO_SERVER_PAUSE_NANOS) {
            // Nothing was sent by the call that failed (the undo of an acquire that failed so, say):
            // waiting the whole timeout again would only double the time to report the outage.
            throw new StoreUnavailableException("cannot " + what + " on " + description + ": " + noServerCause, null);
        }
        // The driver waits the whole server-selection timeout even when every server refused the
        // connection or has no address (it waits for the cluster to change). At start those answers
        // come within milliseconds and will not change within a timeout: fail at once with them.
        // Not once a server has answered: then a refusal is a restart, and the driver's view of it
        // may be a heartbeat (10 s) old; a waiting selection makes the driver look again at once.
        String refused = everAnswered ? null : Unreachable.refusedEverywhere(client, firstLook ? 0 : FIRST_LOOK_MILLIS);
        firstLook = true;
        if (refused != null) {
            noServerCause = refused;
            noServerAt = System.nanoTime() | 1;
            throw new StoreUnavailableException("cannot " + what + " on " + description + ": " + refused, null);
        }
        try {
            T result = op.get();
            noServerAt = 0;
            everAnswered = true;
            return result;
        } catch (MongoTimeoutException e) {
            // No server could be chosen (or no connection had): nothing was sent.
            String cause = Unreachable.cause(client, e);
            noServerCause = cause;
            noServerAt = System.nanoTime() | 1;
            throw new StoreUnavailableException("cannot " + what + " on " + description + ": " + cause, e);
        } catch (MongoSecurityException e) {
            throw new StoreUnavailableException("cannot " + what + " on " + description + ": authentication failed (check the "
                    + "user, the password and authSource in the URL)", e);
        } catch (MongoException e) {
            if (isDuplicateKey(e)) {
                throw new Busy();
            }
            throw new StoreUnavailableException("cannot " + what + " on " + description + ": " + e.getMessage(), e);
        } catch (IllegalStateException e) {
            // the driver's "state should be: open" when the application closed its client under us
            throw new IllegalStateException("the LockStore " + description + " cannot " + what + ": " + e.getMessage(), e);
        }
    }

    static boolean isDuplicateKey(MongoException e) {
        if (e instanceof MongoWriteException w) {
            return w.getError().getCategory() == ErrorCategory.DUPLICATE_KEY;
        }
        return e instanceof MongoCommandException c && c.getErrorCode() == DUPLICATE_KEY;
    }

    /** The acquire's upsert met a running lease of the same name. */
    private static final class Busy extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Busy() {
            super(null, null, false, false);
        }
    }

    static String checkDatabase(String database) {
        if (database == null || database.isEmpty()) {
            throw new IllegalArgumentException("database name is empty: give the database that holds the lock collection, "
                    + "for example mongodb://host:27017/app");
        }
        try {
            MongoNamespace.checkDatabaseNameValidity(database);
            if (database.indexOf('$') >= 0) {
                // The driver lets '$' through; the server refuses it (a name of a later failure, not of the URL).
                throw new IllegalArgumentException("it contains '$'");
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("'" + database + "' is not a valid MongoDB database name: " + e.getMessage()
                    + " (no spaces, no . / \\ \" $, under 64 characters)", e);
        }
        if (database.length() >= 64) {
            throw new IllegalArgumentException("database name '" + database + "' is " + database.length()
                    + " characters long: MongoDB allows at most 63");
        }
        return database;
    }

    static String checkCollection(String collection) {
        if (collection == null || collection.isEmpty() || collection.startsWith("system.") || collection.contains("$")
                || collection.indexOf('\0') >= 0 || collection.length() > 120) {
            throw new IllegalArgumentException("'" + collection + "' is not a usable collection name: give a non-empty name "
                    + "without '$', not starting with 'system.', at most 120 characters");
        }
        return collection;
    }

    /** Configures a {@link MongoLockStore}. */
    public static final class Builder {
        private final MongoClient client;
        private final String database;
        private String collection = DEFAULT_COLLECTION;
        private WriteConcern writeConcern = WriteConcern.MAJORITY;
        private @Nullable String description;
        private @Nullable AutoCloseable owned;

        private Builder(MongoClient client, String database) {
            this.client = client;
            this.database = database;
        }

        /**
         * Sets the lock collection (default {@code turnstile_locks}); MongoDB creates it on the first acquire.
         *
         * @param collection the collection name
         * @return this builder
         * @throws IllegalArgumentException if the name is empty, holds {@code $} or starts with {@code system.}
         */
        public Builder collection(String collection) {
            this.collection = checkCollection(collection);
            return this;
        }

        /**
         * Sets the write concern of every lock write (default {@link WriteConcern#MAJORITY}). Weaker
         * concerns ({@code w:1}) are faster but let a replica-set failover forget a grant, so the lock
         * can be granted twice; keep {@code majority} unless the server is standalone.
         *
         * @param writeConcern the write concern
         * @return this builder
         * @throws IllegalArgumentException if {@code writeConcern} is null or unacknowledged
         */
        public Builder writeConcern(WriteConcern writeConcern) {
            if (writeConcern == null || !writeConcern.isAcknowledged()) {
                throw new IllegalArgumentException("write concern " + writeConcern + " is not acknowledged: a lock store must "
                        + "know whether its writes happened; use WriteConcern.MAJORITY (the default) or W1");
            }
            this.writeConcern = writeConcern;
            return this;
        }

        /**
         * Sets how the store names itself in logs and messages (never give a password here).
         *
         * @param description for example {@code mongodb://db1:27017/app}
         * @return this builder
         */
        public Builder description(String description) {
            this.description = description;
            return this;
        }

        /** Hands something to the store to close with it (the client the store's factory created). */
        Builder owning(AutoCloseable resource) {
            this.owned = resource;
            return this;
        }

        /**
         * Builds the store. Nothing is sent to the server until the first operation.
         *
         * @return the store
         */
        public MongoLockStore build() {
            return new MongoLockStore(this);
        }
    }
}
