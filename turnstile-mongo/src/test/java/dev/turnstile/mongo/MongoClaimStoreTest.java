package dev.turnstile.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.IndexOptions;
import dev.turnstile.StoreSchemaException;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.claim.Claim;
import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimOutcome;
import dev.turnstile.claim.ClaimStore;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.TaskClaimer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What the claiming contract cannot see on MongoDB: the index check, bad input, field names, the server's clock. */
class MongoClaimStoreTest {
    private static MongoClient client;
    private final List<String> collections = new ArrayList<>();

    @BeforeAll
    static void connect() {
        client = MongoClients.create(MongoTestServer.url());
    }

    @AfterAll
    static void disconnect() {
        client.close();
    }

    @AfterEach
    void drop() {
        collections.forEach(c -> collection(c).drop());
    }

    private String fresh() {
        String name = "claims_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        collections.add(name);
        return name;
    }

    private static MongoCollection<Document> collection(String name) {
        return client.getDatabase(MongoTestServer.DATABASE).getCollection(name);
    }

    private static List<String> indexNames(String name) {
        List<String> out = new ArrayList<>();
        collection(name).listIndexes().forEach(d -> out.add(d.getString("name")));
        return out;
    }

    private static List<String> collectionNames() {
        return client.getDatabase(MongoTestServer.DATABASE).listCollectionNames().into(new ArrayList<>());
    }

    @Test
    void aCollectionWithoutTheIndexesIsRefusedWithTheCommandsThatAddThem() {
        String name = fresh();
        ClaimTable t = ClaimTable.builder(name).build();
        collection(name).insertOne(new Document("id", "a").append("phase", "P"));
        assertThatThrownBy(() -> MongoClaimStore.builder(client, MongoTestServer.DATABASE, t).build())
                .isInstanceOf(StoreSchemaException.class)
                .hasMessageContaining("no index that starts with the filter fields [phase] and then 'locked_at'")
                .hasMessageContaining("no index on the key field 'id'")
                .hasMessageContaining("db.getCollection(\"" + name + "\").createIndex({phase: 1, locked_at: 1, updated_at: 1}, {name: \""
                        + name + "_claim_idx\"})")
                .hasMessageContaining("db.getCollection(\"" + name + "\").createIndex({id: 1}, {name: \"" + name
                        + "_id_uidx\", unique: true})")
                .hasMessageContaining("createIndexIfMissing(true)");
        assertThat(indexNames(name)).as("the check changed nothing").containsExactly("_id_");

        // An index in the wrong order (lockedAt before the phase) does not count; the key index alone is not enough.
        collection(name).createIndex(new Document("locked_at", 1).append("phase", 1));
        collection(name).createIndex(new Document("id", 1), new IndexOptions().unique(true));
        assertThatThrownBy(() -> MongoClaimStore.builder(client, MongoTestServer.DATABASE, t).build())
                .isInstanceOf(StoreSchemaException.class).hasMessageContaining("no index that starts with the filter fields")
                .hasMessageNotContaining("no index on the key field");
    }

    @Test
    void createIndexIfMissingCreatesBothIndexesOnceAndTheCheckThenPasses() {
        String name = fresh();
        ClaimTable t = ClaimTable.builder(name).filterColumns("tenant").build();
        MongoClaimStore.builder(client, MongoTestServer.DATABASE, t).createIndexIfMissing(true).build();
        MongoClaimStore.builder(client, MongoTestServer.DATABASE, t).createIndexIfMissing(true).build();
        assertThat(indexNames(name)).containsExactlyInAnyOrder("_id_", name + "_claim_idx", name + "_id_uidx");
        Document keys = collection(name).listIndexes().into(new ArrayList<>()).stream()
                .filter(d -> d.getString("name").equals(name + "_claim_idx")).findFirst().orElseThrow().get("key", Document.class);
        assertThat(new ArrayList<>(keys.keySet())).containsExactly("phase", "tenant", "locked_at", "updated_at");
        MongoClaimStore.builder(client, MongoTestServer.DATABASE, t).build(); // the check alone passes now
    }

    @Test
    void badInputIsRefusedWithAMessageAndLeavesNothingBehind() {
        String name = fresh();
        assertThatThrownBy(() -> ClaimTable.builder(name).phaseColumn("state.$where")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'state.$where' is not an identifier");
        assertThatThrownBy(() -> ClaimTable.builder(name).lockedAtColumn("$lockedAt")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not an identifier");
        assertThatThrownBy(() -> ClaimTable.builder("tasks$x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not an identifier");
        ClaimTable t = ClaimTable.builder(name).build();
        assertThatThrownBy(() -> MongoClaimStore.builder(client, "bad db", t)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a valid MongoDB database name");
        assertThatThrownBy(() -> MongoClaimStore.builder(client, MongoTestServer.DATABASE, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("table is null");
        assertThatThrownBy(() -> MongoClaimStore.builder(collection("other"), t)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("the collection is 'other' but the table says '" + name + "'");
        assertThatThrownBy(() -> MongoClaimStore.builder(client, MongoTestServer.DATABASE, t).writeConcern(
                com.mongodb.WriteConcern.UNACKNOWLEDGED)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not acknowledged");
        assertThatThrownBy(() -> MongoClaimStore.builder(client, MongoTestServer.DATABASE, t).build())
                .isInstanceOf(StoreSchemaException.class);
        assertThat(collectionNames()).as("no collection was created by refused input").doesNotContain(name, "other");

        ClaimStore store = MongoClaimStore.builder(client, MongoTestServer.DATABASE, t).createIndexIfMissing(true).build();
        assertThatThrownBy(() -> TaskClaimer.builder(store).lockTimeout(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lock timeout is PT0S: it must be positive");
        assertThatThrownBy(() -> TaskClaimer.builder(store).lockTimeout(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be positive");
        assertThatThrownBy(() -> store.claim(ClaimFilter.all(), 1, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lock timeout of at least 1 ms");
        assertThat(collection(name).countDocuments()).isZero();
    }

    @Test
    void lostClaimsWritesAreResultsNotExceptions() {
        String name = fresh();
        ClaimTable t = ClaimTable.builder(name).build();
        MongoClaimFixtures.insertTasks(collection(name), "P", System.currentTimeMillis(), List.of("a", "b"));
        try (TaskClaimer c = TaskClaimer.builder(MongoClaimStore.builder(client, MongoTestServer.DATABASE, t)
                .createIndexIfMissing(true).build()).lockTimeout(Duration.ofMinutes(1)).build()) {
            List<Claim> claims = c.claim(ClaimFilter.all(), 2);
            Claim reclaimed = claims.stream().filter(x -> x.id().equals("a")).findFirst().orElseThrow();
            Claim deleted = claims.stream().filter(x -> x.id().equals("b")).findFirst().orElseThrow();
            // Someone else claimed "a" since (its version moved on), and "b" was deleted.
            collection(name).updateOne(new Document("id", "a"), new Document("$inc", new Document("claim_version", 1L)));
            collection(name).deleteOne(new Document("id", "b"));
            assertThat(reclaimed.heartbeat()).isEqualTo(ClaimOutcome.LOST);
            assertThat(reclaimed.relock()).isEqualTo(ClaimOutcome.LOST);
            assertThat(deleted.relock()).isEqualTo(ClaimOutcome.LOST);
            assertThat(deleted.lost().toCompletableFuture().join().reason()).contains("no longer exists");
            Document a = MongoClaimFixtures.task(collection(name), "a");
            assertThat(a.getDate("locked_at").toInstant()).isEqualTo(reclaimed.lockedAt());
        }
    }

    @Test
    void anUpdateOfTheDocumentsIdIsRefusedAndTheClaimGoesOn() {
        String name = fresh();
        ClaimTable t = ClaimTable.builder(name).build(); // the key is "id", so "_id" is not the key column
        MongoClaimFixtures.insertTasks(collection(name), "P", System.currentTimeMillis(), List.of("a"));
        Object documentId = MongoClaimFixtures.task(collection(name), "a").get("_id");
        try (TaskClaimer c = TaskClaimer.builder(MongoClaimStore.builder(client, MongoTestServer.DATABASE, t)
                .createIndexIfMissing(true).build()).lockTimeout(Duration.ofMinutes(1)).build()) {
            Claim claim = c.claimNext(ClaimFilter.all()).orElseThrow();
            for (String field : List.of("_id", "_ID")) {
                assertThatThrownBy(() -> claim.update(Map.of(field, "x"))).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("column '" + field + "' is kept by the store").hasMessageContaining("cannot be written");
            }
            assertThat(claim.update(Map.of("note", "still mine"))).isEqualTo(ClaimOutcome.APPLIED);
            Document a = MongoClaimFixtures.task(collection(name), "a");
            assertThat(a.get("_id")).isEqualTo(documentId);
            assertThat(a).containsEntry("note", "still mine").doesNotContainKey("_ID");
        }
    }

    @Test
    void customFieldNamesAndDocumentsTheApplicationInsertedWithoutClaimFields() {
        String name = fresh();
        ClaimTable t = ClaimTable.builder(name).idColumn("_id").phaseColumn("state").lockedAtColumn("lockedAt")
                .updatedAtColumn("updatedAt").versionColumn("rev").build();
        MongoClaimStore store = MongoClaimStore.builder(collection(name), t).createIndexIfMissing(true).build();
        assertThat(indexNames(name)).as("no key index beside _id's").containsExactlyInAnyOrder("_id_", name + "_claim_idx");
        // The application inserts tasks knowing nothing of claiming: due at once, oldest updatedAt first.
        collection(name).insertOne(new Document("_id", 2).append("state", "Deleting").append("updatedAt", new Date(2000)));
        collection(name).insertOne(new Document("_id", 1).append("state", "Deleting").append("updatedAt", new Date(1000)));
        try (TaskClaimer c = TaskClaimer.builder(store).lockTimeout(Duration.ofMinutes(1)).build()) {
            Claim first = c.claimNext(ClaimFilter.where("STATE", "Deleting")).orElseThrow(); // the core matches filter names case-insensitively
            assertThat(first.key()).isEqualTo(1);
            assertThat(first.version()).isEqualTo(1);
            assertThat(first.update(Map.of("note", "released"))).isEqualTo(ClaimOutcome.APPLIED);
            assertThat(first.moveTo("Deleted")).isEqualTo(ClaimOutcome.APPLIED);
            Document d = collection(name).find(new Document("_id", 1)).first();
            assertThat(d).containsEntry("state", "Deleted").containsEntry("note", "released").containsEntry("rev", 1L)
                    .containsEntry("lockedAt", new Date(0));
            assertThat(d.getDate("updatedAt").getTime()).isGreaterThan(2000);
            assertThat(c.claimNext(ClaimFilter.where("state", "Deleting")).orElseThrow().key()).isEqualTo(2);
        }
    }

    @Test
    void aDocumentWithoutTheIdFieldIsASchemaErrorThatNamesTheField() {
        String name = fresh();
        ClaimTable t = ClaimTable.builder(name).idColumn("taskId").phaseColumn("state").build();
        MongoClaimStore store = MongoClaimStore.builder(collection(name), t).createIndexIfMissing(true).build();
        collection(name).insertOne(new Document("_id", "bad-1").append("state", "Deleting").append("updated_at", new Date(1000)));
        assertThatThrownBy(() -> store.claim(ClaimFilter.where("state", "Deleting"), 1, Duration.ofMinutes(1)))
                .isInstanceOf(StoreSchemaException.class).hasMessageContaining("claimed the document _id=bad-1")
                .hasMessageContaining("has no 'taskId' field: give every task document one (unique), or name '_id' as the id column");

        String second = fresh();
        MongoClaimStore other = MongoClaimStore.builder(collection(second), ClaimTable.builder(second).idColumn("taskId")
                .phaseColumn("state").build()).createIndexIfMissing(true).build();
        collection(second).insertOne(new Document("_id", "bad-2").append("state", "Deleting").append("updated_at", new Date(1000)));
        collection(second).insertOne(new Document("taskId", 7).append("state", "Deleting").append("updated_at", new Date(500)));
        assertThat(other.claim(ClaimFilter.where("state", "Deleting"), 5, Duration.ofMinutes(1)))
                .as("the task claimed before the bad document is handed out").extracting(r -> r.key()).containsExactly(7);
        assertThatThrownBy(() -> other.claim(ClaimFilter.where("state", "Deleting"), 5, Duration.ofMinutes(1)))
                .as("its claim was given back: the next claim meets it at once, not after the lock timeout")
                .isInstanceOf(StoreSchemaException.class).hasMessageContaining("_id=bad-2");
    }

    @Test
    void anUnreachableServerIsReportedAsUnavailable() {
        try (MongoClient dead = MongoClients.create("mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300&connectTimeoutMS=300")) {
            assertThatThrownBy(() -> MongoClaimStore.builder(dead, "app", ClaimTable.builder("tasks").build()).build())
                    .isInstanceOf(StoreUnavailableException.class).isNotInstanceOf(StoreSchemaException.class)
                    .hasMessageContaining("cannot list the indexes of collection 'tasks' on MongoDB database app (collection tasks)");
        }
    }

    @Test
    void timeIsTheServersClockNotTheClients() throws Exception {
        // The server's wall clock is an hour behind this client's (libfaketime in the server's JVM
        // only). A store that judged "due" or computed the relock's due time with the client's clock
        // would find every claim an hour old (due at once) or hold relocked tasks an hour too long.
        try (MongoTestServer.SkewedServer server = MongoTestServer.skewed("-1h", "clock");
                MongoClient skewed = MongoClients.create(server.url())) {
            ClaimTable t = ClaimTable.builder("clock_tasks").build();
            MongoClaimFixtures.insertTasks(skewed.getDatabase("clock").getCollection(t.table()), "P",
                    System.currentTimeMillis() - Duration.ofHours(1).toMillis(), List.of("a"));
            ClaimStore store = MongoClaimStore.builder(skewed, "clock", t).createIndexIfMissing(true).build();
            try (TaskClaimer a = TaskClaimer.builder(store).lockTimeout(Duration.ofMillis(600)).relockFloor(Duration.ofMillis(400)).build()) {
                Claim first = a.claimNext(ClaimFilter.all()).orElseThrow();
                assertThat(Duration.between(first.lockedAt(), Instant.now())).as("lockedAt is the server's time")
                        .isBetween(Duration.ofMinutes(59), Duration.ofMinutes(61));
                assertThat(a.claimNext(ClaimFilter.all())).as("held by the server's clock").isEmpty();
                Thread.sleep(900);
                Claim second = a.claimNext(ClaimFilter.all()).orElseThrow(() -> new AssertionError("due 600 ms after the claim, by the server's clock"));
                assertThat(second.version()).isGreaterThan(first.version());
                assertThat(second.unlock()).isEqualTo(ClaimOutcome.APPLIED);
                Claim third = a.claimNext(ClaimFilter.all()).orElseThrow();
                // updatedAt was just stamped by the server: the wait so far is ~0, so the relock waits the floor.
                long relockedAt = System.nanoTime();
                assertThat(third.relock()).isEqualTo(ClaimOutcome.APPLIED);
                assertThat(a.claimNext(ClaimFilter.all())).as("not due before the floor").isEmpty();
                Claim fourth = null;
                while (fourth == null && System.nanoTime() - relockedAt < Duration.ofSeconds(3).toNanos()) {
                    fourth = a.claimNext(ClaimFilter.all()).orElse(null);
                    Thread.sleep(20);
                }
                assertThat(fourth).as("due after the floor").isNotNull();
                assertThat(Duration.ofNanos(System.nanoTime() - relockedAt)).isBetween(Duration.ofMillis(350), Duration.ofMillis(1500));
            }
        }
    }

    @Test
    void theClaimCommandLeavesTheTimeToTheServer() {
        Document cmd = MongoClaimStore.claimCommand(ClaimTable.builder("tasks").build(), ClaimFilter.where("phase", "Deleting"),
                Duration.ofSeconds(30));
        assertThat(cmd.toJson()).isEqualTo("{\"findAndModify\": \"tasks\", \"query\": {\"phase\": \"Deleting\", \"$expr\": "
                + "{\"$lte\": [\"$locked_at\", {\"$subtract\": [\"$$NOW\", 30000]}]}}, \"sort\": {\"locked_at\": 1, \"updated_at\": 1}, "
                + "\"update\": {\"$currentDate\": {\"locked_at\": true}, \"$inc\": {\"claim_version\": 1}}, \"fields\": "
                + "{\"id\": 1, \"claim_version\": 1, \"locked_at\": 1}, \"new\": true}");
        assertThatThrownBy(() -> MongoClaimStore.claimCommand(ClaimTable.builder("tasks").build(), ClaimFilter.all(), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1 ms");
    }

    @Test
    void aBatchThatFailsHalfWayHandsOutTheTasksItClaimed() {
        String name = fresh();
        ClaimTable t = ClaimTable.builder(name).build();
        MongoCollection<Document> tasks = collection(name);
        MongoClaimFixtures.insertTasks(tasks, "P", 1000, List.of("a"));
        MongoClaimFixtures.insertTasks(tasks, "P", 2000, List.of("b"));
        // The server refuses to $inc a version that is not a number: the batch's second command fails.
        tasks.updateOne(new Document("id", "b"), new Document("$set", new Document("claim_version", "not a number")));
        try (TaskClaimer c = TaskClaimer.builder(MongoClaimStore.builder(client, MongoTestServer.DATABASE, t)
                .createIndexIfMissing(true).build()).lockTimeout(Duration.ofMinutes(1)).build()) {
            List<Claim> batch = c.claim(ClaimFilter.all(), 3);
            assertThat(batch).extracting(Claim::id).containsExactly("a");
            assertThat(batch.get(0).unlock()).isEqualTo(ClaimOutcome.APPLIED);
            assertThatThrownBy(() -> c.claim(ClaimFilter.all(), 3)).as("a failure with nothing claimed is reported")
                    .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("cannot claim tasks on MongoDB database");
        }
    }
}
