package dev.turnstile.mongo;

import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.ReturnDocument;
import dev.turnstile.StoreSchemaException;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimStore;
import dev.turnstile.claim.ClaimSummary;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.ClaimedRow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.bson.Document;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Work claiming over the application's own MongoDB collection, with the MongoDB Java sync driver.
 * A claim is one {@code findOneAndUpdate} per task (a batch of N is up to N of them): the due task
 * that matches the filter, oldest {@code lockedAt} then {@code updatedAt} first, gets
 * {@code lockedAt} set to the server's now and its version raised. Every later write is one update
 * guarded by the key and that version. Time is the server's clock ({@code $$NOW} in {@code $expr},
 * {@code $currentDate}); the queries are in {@code MongoClaimQueries}. A batch that meets a failure
 * after some tasks are claimed returns those (and logs the failure); the next claim reports it.
 *
 * <pre>{@code
 * ClaimTable gateways = ClaimTable.builder("gateways").idColumn("_id").build();
 * ClaimStore store = MongoClaimStore.builder(mongoClient, "app", gateways).build();  // checks the indexes
 * TaskClaimer claimer = TaskClaimer.builder(store).lockTimeout(Duration.ofMinutes(1)).build();
 * }</pre>
 *
 * <p>The {@code lockedAt} and {@code updatedAt} fields hold BSON dates ({@code lockedAt} at the epoch
 * when free); a document without {@code lockedAt} or the version is due at once. A number in
 * {@code lockedAt} (epoch milliseconds) would sort before every date and make the task look due to
 * every claim: keep dates there. {@link
 * Builder#build()} checks with {@code listIndexes} that the collection has an index that starts
 * with the filter fields and then {@code lockedAt}, and (unless the key is {@code _id}) an index on
 * the key; what is missing is reported with the {@code createIndex} commands that add it.
 *
 * <p>Needs MongoDB 4.2 or later ({@code $$NOW}); it uses no update pipelines, transactions or
 * change streams. Writes use write concern {@code majority} unless {@link Builder#writeConcern}
 * says otherwise, and reads go to the primary.
 */
public final class MongoClaimStore implements ClaimStore {
    private static final Logger log = LoggerFactory.getLogger(MongoClaimStore.class);
    private final MongoCollection<Document> tasks;
    private final ClaimTable table;
    private final String description;
    private final FindOneAndUpdateOptions claimOptions;
    private final FindOneAndUpdateOptions stampOptions;

    private MongoClaimStore(Builder b) {
        this.tasks = b.collection.withWriteConcern(b.writeConcern).withReadPreference(ReadPreference.primary());
        this.table = b.table;
        this.description = (b.description != null ? b.description
                : "MongoDB database " + b.collection.getNamespace().getDatabaseName()) + " (collection " + table.table() + ")";
        this.claimOptions = new FindOneAndUpdateOptions().sort(MongoClaimQueries.claimSort(table))
                .projection(MongoClaimQueries.claimProjection(table)).returnDocument(ReturnDocument.AFTER);
        this.stampOptions = new FindOneAndUpdateOptions().projection(MongoClaimQueries.relockProjection(table))
                .returnDocument(ReturnDocument.AFTER);
    }

    /**
     * Starts a builder over the application's client; the collection is the table's name.
     *
     * @param client the client; the store never closes it
     * @param database the database that holds the task collection
     * @param table the task collection and its field names
     * @return a builder
     * @throws IllegalArgumentException if an argument is null, or the database name is not valid
     */
    public static Builder builder(MongoClient client, String database, ClaimTable table) {
        if (client == null) {
            throw new IllegalArgumentException("client is null: give the application's MongoClient");
        }
        String db = MongoLockStore.checkDatabase(database);
        checkTable(table);
        return new Builder(client.getDatabase(db).getCollection(MongoLockStore.checkCollection(table.table())), table);
    }

    /**
     * Starts a builder over the database of a lock store, with its client: for a task collection
     * beside the lock collection (what {@code turnstile console --claim-table} uses). The claim
     * store does not close the lock store; close the lock store after it.
     *
     * @param lockStore the lock store whose database holds the task collection
     * @param table the task collection and its field names
     * @return a builder
     * @throws IllegalArgumentException if an argument is null, or the collection name is not valid
     */
    public static Builder builder(MongoLockStore lockStore, ClaimTable table) {
        if (lockStore == null) {
            throw new IllegalArgumentException("lockStore is null: give the MongoLockStore whose database holds the tasks");
        }
        checkTable(table);
        return new Builder(lockStore.database().getCollection(MongoLockStore.checkCollection(table.table())), table);
    }

    /**
     * Starts a builder over a collection the application already has.
     *
     * @param collection the task collection; its name must be the table's name
     * @param table the field names
     * @return a builder
     * @throws IllegalArgumentException if an argument is null or the names differ
     */
    public static Builder builder(MongoCollection<Document> collection, ClaimTable table) {
        if (collection == null) {
            throw new IllegalArgumentException("collection is null: give the task collection");
        }
        checkTable(table);
        String name = collection.getNamespace().getCollectionName();
        if (!name.equals(table.table())) {
            throw new IllegalArgumentException("the collection is '" + name + "' but the table says '" + table.table()
                    + "': build the table with ClaimTable.builder(\"" + name + "\")");
        }
        return new Builder(collection, table);
    }

    /**
     * Returns the claiming command exactly as the store sends it for one task, as a
     * {@code findAndModify} command document ({@code query}, {@code sort}, {@code update},
     * {@code fields}, {@code new: true}), for reviews, {@code explain} and benchmarks. A batch of N
     * sends it up to N times.
     *
     * @param table the task collection
     * @param filter the filter (its values are in the document)
     * @param lockTimeout the lock timeout
     * @return the command document
     * @throws IllegalArgumentException if an argument is null or the timeout is under 1 ms
     */
    public static Document claimCommand(ClaimTable table, ClaimFilter filter, Duration lockTimeout) {
        if (table == null || filter == null || lockTimeout == null || lockTimeout.toMillis() < 1) {
            throw new IllegalArgumentException("table, filter and a lock timeout of at least 1 ms are required");
        }
        return new Document("findAndModify", table.table())
                .append("query", MongoClaimQueries.claimFilter(table, filter, lockTimeout))
                .append("sort", MongoClaimQueries.claimSort(table))
                .append("update", MongoClaimQueries.claimUpdate(table))
                .append("fields", MongoClaimQueries.claimProjection(table))
                .append("new", true);
    }

    private static void checkTable(ClaimTable table) {
        if (table == null) {
            throw new IllegalArgumentException("table is null: give ClaimTable.builder(\"tasks\").build()");
        }
    }

    @Override
    public ClaimTable table() {
        return table;
    }

    @Override
    public List<ClaimedRow> claim(ClaimFilter filter, int max, Duration lockTimeout) {
        if (lockTimeout == null || lockTimeout.toMillis() < 1 || max < 1) {
            throw new IllegalArgumentException("claim needs a lock timeout of at least 1 ms and a batch of at least 1, not "
                    + lockTimeout + " and " + max);
        }
        Document query = MongoClaimQueries.claimFilter(table, filter, lockTimeout);
        Document update = MongoClaimQueries.claimUpdate(table);
        List<ClaimedRow> out = new ArrayList<>();
        while (out.size() < max) {
            Document d;
            try {
                d = call("claim tasks", () -> tasks.findOneAndUpdate(query, update, claimOptions));
            } catch (StoreUnavailableException e) {
                if (out.isEmpty()) {
                    throw e;
                }
                // The tasks claimed so far are ours: hand them out rather than leave them locked
                // until the timeout; the next claim meets the failure again and reports it.
                log.warn("claim on {} stopped after {} of {} tasks: {}", description, out.size(), max, e.getMessage());
                break;
            }
            if (d == null) {
                break;
            }
            Object key = d.get(table.idColumn());
            Date lockedAt = d.getDate(table.lockedAtColumn()); // the claim's $currentDate: always set
            if (key == null || lockedAt == null) {
                StoreSchemaException bad = new StoreSchemaException("claimed the document _id=" + d.get("_id") + " of "
                        + description + (key == null ? " that has no '" + table.idColumn() + "' field: give every task document "
                        + "one (unique), or name '_id' as the id column" : " but it came back without '" + table.lockedAtColumn()
                        + "'"), null);
                // Not a task this store can hand out: give its claim back (locked_at to the epoch, so the
                // next claim meets it first and reports it, rather than after every lock timeout).
                try {
                    // guarded by the version this claim set: a later, legitimate claim of it is left alone
                    call("give back a task without its id", () -> tasks.updateOne(new Document("_id", d.get("_id"))
                                    .append(table.versionColumn(), d.get(table.versionColumn())),
                            new Document("$set", new Document(table.lockedAtColumn(), MongoClaimQueries.EPOCH))));
                } catch (StoreUnavailableException e) {
                    bad.addSuppressed(e);
                }
                if (out.isEmpty()) {
                    throw bad;
                }
                // As above: the tasks claimed before it are ours; the next claim reports it.
                log.warn("claim on {} stopped after {} of {} tasks: {}", description, out.size(), max, bad.getMessage());
                break;
            }
            out.add(new ClaimedRow(key, version(d), lockedAt.toInstant()));
        }
        return out;
    }

    @Override
    public boolean heartbeat(Object key, long version) {
        return updated("keep task '" + key + "' claimed", key, version, MongoClaimQueries.heartbeatUpdate(table));
    }

    @Override
    public boolean unlock(Object key, long version, Map<String, Object> values) {
        return updated("unlock task '" + key + "'", key, version, MongoClaimQueries.unlockUpdate(table, values));
    }

    @Override
    public boolean relock(Object key, long version, Duration floor, Duration lockTimeout) {
        String what = "relock task '" + key + "'";
        Document guard = MongoClaimQueries.guard(table, key, version);
        Document stamped = call(what, () -> tasks.findOneAndUpdate(guard, MongoClaimQueries.heartbeatUpdate(table), stampOptions));
        if (stamped == null) {
            return false;
        }
        Date due = MongoClaimQueries.relockedAt(stamped, table, floor, lockTimeout);
        return updated(what, key, version, MongoClaimQueries.relockUpdate(table, due));
    }

    @Override
    public boolean update(Object key, long version, Map<String, Object> values) {
        return updated("update task '" + key + "'", key, version, MongoClaimQueries.updateUpdate(values));
    }

    /**
     * Three aggregations (all, claimed, overdue, each grouped by phase) and one find, each judged
     * by the server's {@code $$NOW}; the summary has no store time ({@code storeNow} null), since
     * reading the server's clock would take a command more and the times shown are the server's own.
     */
    @Override
    public ClaimSummary summarize(Duration lockTimeout, Duration stuckAfter, int maxStuck) {
        ClaimSummary.checkRequest(lockTimeout, stuckAfter, maxStuck);
        String what = "summarize the task collection";
        List<Document> groups = call(what, () -> tasks.aggregate(MongoClaimQueries.summary(table, lockTimeout,
                ClaimSummary.MAX_PHASES + 1)).into(new ArrayList<>()));
        List<ClaimSummary.PhaseCounts> phases = new ArrayList<>();
        for (Document d : groups.subList(0, Math.min(groups.size(), ClaimSummary.MAX_PHASES))) {
            Object phase = d.get("_id");
            long total = count(d, "n");
            long claimed = count(d, "claimed");
            long overdue = count(d, "overdue");
            phases.add(new ClaimSummary.PhaseCounts(phase == null ? null : String.valueOf(phase), total,
                    total - claimed - overdue, claimed, overdue,
                    d.get("oldest") instanceof Date at ? at.toInstant().plus(lockTimeout) : null));
        }
        List<ClaimSummary.StuckTask> stuck = new ArrayList<>();
        if (maxStuck > 0) {
            for (Document d : call(what, () -> tasks.find(MongoClaimQueries.stuckMatch(table, stuckAfter))
                    .sort(MongoClaimQueries.stuckSort(table)).limit(maxStuck).into(new ArrayList<>()))) {
                Object key = d.get(table.idColumn());
                Object phase = d.get(table.phaseColumn());
                if (key != null && d.get(table.lockedAtColumn()) instanceof Date locked
                        && d.get(table.updatedAtColumn()) instanceof Date updated && d.get(table.versionColumn()) instanceof Number v) {
                    stuck.add(new ClaimSummary.StuckTask(key, phase == null ? null : String.valueOf(phase), locked.toInstant(),
                            updated.toInstant(), v.longValue()));
                }
            }
        }
        return new ClaimSummary(null, lockTimeout, stuckAfter, phases, groups.size() > ClaimSummary.MAX_PHASES, stuck);
    }

    private static long count(Document group, String field) {
        return group.get(field) instanceof Number n ? n.longValue() : 0;
    }

    @Override
    public boolean release(ClaimSummary.StuckTask task) {
        if (task == null) {
            throw new IllegalArgumentException("task is null: give a stuck task the summary returned");
        }
        Document guard = MongoClaimQueries.releaseGuard(table, task.key(), task.version(), Date.from(task.updatedAt()));
        return call("release the claim on task '" + task.keyText() + "'",
                () -> tasks.updateOne(guard, MongoClaimQueries.releaseUpdate(table)).getMatchedCount()) == 1;
    }

    private boolean updated(String what, Object key, long version, Document update) {
        Document guard = MongoClaimQueries.guard(table, key, version);
        return call(what, () -> tasks.updateOne(guard, update).getMatchedCount()) == 1;
    }

    /** {@code _id}, when the key is another field: a document's {@code _id} cannot change. */
    @Override
    public Set<String> reservedColumns() {
        return Set.of("_id");
    }

    @Override
    public String description() {
        return description;
    }

    /** The client belongs to the caller: nothing to close. */
    @Override
    public void close() {
        // nothing owned
    }

    private long version(Document d) {
        Object v = d.get(table.versionColumn());
        if (v instanceof Number n) {
            return n.longValue();
        }
        throw new StoreSchemaException("task '" + d.get(table.idColumn()) + "' in " + description + " has no number in field '"
                + table.versionColumn() + "' after its claim (" + v + "): the field must hold a number or be absent", null);
    }

    private <T> T call(String what, Supplier<T> op) {
        try {
            return op.get();
        } catch (MongoException e) {
            throw new StoreUnavailableException("cannot " + what + " on " + description + ": " + e.getMessage(), e);
        }
    }

    // ---- the check at construction -------------------------------------------------------------

    private void validate(boolean create) {
        if (create) {
            call("create the claiming indexes", () -> {
                tasks.createIndex(MongoClaimQueries.claimIndexKeys(table), new IndexOptions().name(MongoClaimQueries.claimIndexName(table)));
                if (needsIdIndex()) {
                    tasks.createIndex(MongoClaimQueries.idIndexKeys(table),
                            new IndexOptions().name(MongoClaimQueries.idIndexName(table)).unique(true));
                }
                return null;
            });
        }
        List<Document> indexes = call("list the indexes of collection '" + table.table() + "'",
                () -> tasks.listIndexes().into(new ArrayList<>()));
        boolean claimIndex = indexes.stream().anyMatch(this::isClaimIndex);
        boolean idIndex = !needsIdIndex() || indexes.stream().anyMatch(this::isIdIndex);
        if (!claimIndex || !idIndex) {
            List<String> missing = new ArrayList<>();
            if (!claimIndex) {
                missing.add("no index that starts with the filter fields " + table.filterColumns() + " and then '"
                        + table.lockedAtColumn() + "' (without it every claim reads the whole collection)");
            }
            if (!idIndex) {
                missing.add("no index on the key field '" + table.idColumn() + "' (every guarded write looks the task up by it)");
            }
            throw new StoreSchemaException("the task collection '" + table.table() + "' in " + description
                    + " cannot be claimed from: " + String.join("; ", missing) + ". Add what is missing with:\n"
                    + MongoClaimQueries.createIndexCommand(table, !claimIndex, !idIndex)
                    + "\nor build the store with createIndexIfMissing(true)", null);
        }
    }

    private boolean needsIdIndex() {
        return !table.idColumn().equals("_id");
    }

    /** The filter fields first, in any order (they are equalities), then {@code lockedAt}. */
    private boolean isClaimIndex(Document index) {
        List<String> keys = new ArrayList<>(index.get("key", Document.class).keySet());
        List<String> filters = table.filterColumns();
        if (keys.size() <= filters.size()) {
            return false;
        }
        Set<String> prefix = new HashSet<>(keys.subList(0, filters.size()));
        return prefix.equals(new HashSet<>(filters)) && keys.get(filters.size()).equals(table.lockedAtColumn());
    }

    private boolean isIdIndex(Document index) {
        return index.get("key", Document.class).keySet().stream().findFirst().filter(table.idColumn()::equals).isPresent();
    }

    /** Builds a {@link MongoClaimStore}. Not thread-safe. */
    public static final class Builder {
        private final MongoCollection<Document> collection;
        private final ClaimTable table;
        private WriteConcern writeConcern = WriteConcern.MAJORITY;
        private boolean createIndex;
        private @Nullable String description;

        private Builder(MongoCollection<Document> collection, ClaimTable table) {
            this.collection = collection;
            this.table = table;
        }

        /**
         * Creates the claiming index (and the key's unique index, unless the key is {@code _id}) at
         * build time if missing, as the validation's message shows them. Default off: the
         * collection is usually the application's.
         *
         * @param create {@code true} to create them
         * @return this builder
         */
        public Builder createIndexIfMissing(boolean create) {
            this.createIndex = create;
            return this;
        }

        /**
         * Sets the write concern of every claiming write (default {@link WriteConcern#MAJORITY}, so
         * a replica-set failover cannot forget a claim and hand the task out twice).
         *
         * @param writeConcern an acknowledged write concern
         * @return this builder
         * @throws IllegalArgumentException if it is null or unacknowledged
         */
        public Builder writeConcern(WriteConcern writeConcern) {
            if (writeConcern == null || !writeConcern.isAcknowledged()) {
                throw new IllegalArgumentException("write concern " + writeConcern + " is not acknowledged: claiming must "
                        + "know whether its writes happened; use WriteConcern.MAJORITY (the default) or W1");
            }
            this.writeConcern = writeConcern;
            return this;
        }

        /**
         * Sets how the store names itself in messages and logs. Must not contain secrets.
         *
         * @param description for example {@code mongodb://db1:27017/app}
         * @return this builder
         * @throws IllegalArgumentException if it is null
         */
        public Builder description(String description) {
            if (description == null) {
                throw new IllegalArgumentException("description is null: give a text that names the server without "
                        + "secrets, or do not set it");
            }
            this.description = description;
            return this;
        }

        /**
         * Creates the indexes if asked, and checks with {@code listIndexes} that the collection has
         * what claiming needs.
         *
         * @return the store
         * @throws StoreSchemaException if an index is missing; the message gives the
         *     {@code createIndex} commands that add it
         * @throws StoreUnavailableException if the server cannot be reached
         */
        public MongoClaimStore build() {
            MongoClaimStore store = new MongoClaimStore(this);
            store.validate(createIndex);
            return store;
        }
    }
}
