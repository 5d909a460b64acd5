package dev.turnstile.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.WriteConcern;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.turnstile.Lease;
import dev.turnstile.LockInfo;
import dev.turnstile.LockOptions;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What the contract cannot see: the document, the server's clock, the insert race, the client's ownership. */
class MongoLockStoreTest {
    private static MongoClient client;

    @BeforeAll
    static void connect() {
        client = MongoClients.create(MongoTestServer.url());
    }

    @AfterAll
    static void disconnect() {
        client.close();
    }

    private static String unique(String what) {
        return what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static MongoCollection<Document> collection(String name) {
        return client.getDatabase("turnstile_test").getCollection(name);
    }

    @Test
    void oneDocumentPerLockWithTheServersTimesAndNoDeletes() {
        String coll = unique("shape");
        LockStore store = MongoLockStore.builder(client, "turnstile_test").collection(coll).build();
        String name = unique("doc");
        Grant first = store.tryAcquire(new AcquireRequest(name, "me@host", "tok-1", Duration.ofSeconds(10))).orElseThrow();
        Document d = collection(coll).find(new Document("_id", name)).first();
        assertThat(d).isNotNull();
        assertThat(d.keySet()).containsExactlyInAnyOrder("_id", "owner", "token", "fence", "lockedAt", "renewedAt", "ttlMs", "minHoldMs");
        assertThat(d.getString("owner")).isEqualTo("me@host");
        assertThat(d.getString("token")).isEqualTo("tok-1");
        assertThat(d.get("lockedAt")).isInstanceOf(Date.class);
        assertThat(d.getLong("fence")).isEqualTo(first.fence());
        assertThat(first.expiresAt()).isEqualTo(first.acquiredAt().plusSeconds(10));

        assertThat(store.release(name, "tok-1", Duration.ZERO)).isTrue();
        Grant second = store.tryAcquire(new AcquireRequest(name, "me@host", "tok-2", Duration.ofSeconds(10))).orElseThrow();
        assertThat(store.forceRelease(name)).isTrue();
        Grant third = store.tryAcquire(new AcquireRequest(name, "me@host", "tok-3", Duration.ofSeconds(10))).orElseThrow();
        assertThat(List.of(first.fence(), second.fence(), third.fence())).containsExactly(1L, 2L, 3L);
        assertThat(collection(coll).countDocuments()).as("release and force release keep the document (and its fence)").isEqualTo(1);
        store.close();
    }

    @Test
    void expiryRunsOnTheServersClockNotTheClients() throws Exception {
        // A server whose wall clock is an hour behind this client's (libfaketime in the server's JVM
        // only): a store that computed lockUntil from the client's clock, as ShedLock's Mongo provider
        // does, would keep the lock an hour too long; this one follows the server and reports its time.
        try (MongoTestServer.SkewedServer server = MongoTestServer.skewed("-1h", "clock")) {
            String url = server.url();
            try (LockStore a = LockStores.open(url); LockStore b = LockStores.open(url)) {
                String name = unique("clock");
                Grant g = a.tryAcquire(new AcquireRequest(name, "a", "ta", Duration.ofMillis(400))).orElseThrow();
                assertThat(Duration.between(g.acquiredAt(), Instant.now())).as("acquiredAt is the server's time")
                        .isBetween(Duration.ofMinutes(59), Duration.ofMinutes(61));
                assertThat(b.tryAcquire(new AcquireRequest(name, "b", "tb", Duration.ofSeconds(10)))).isEmpty();
                Thread.sleep(700);
                assertThat(b.tryAcquire(new AcquireRequest(name, "b", "tb", Duration.ofSeconds(10))))
                        .as("free 400 ms after the acquire, by the server's clock").isPresent();
                assertThat(a.release(name, "ta", Duration.ZERO)).isFalse();
                assertThat(b.heldLocks()).extracting(LockInfo::name).containsExactly(name);
            }
        }
    }

    @Test
    void everyQueryLeavesTheTimeToTheServer() {
        List<Bson> all = List.of(MongoQueries.acquireFilter("n"), MongoQueries.acquireUpdate("o", "t", Duration.ofSeconds(1)),
                MongoQueries.heldBy("n", "t"), MongoQueries.running("n"), MongoQueries.extendUpdate(Duration.ofSeconds(1)),
                MongoQueries.releaseUpdate(Duration.ofSeconds(1)), MongoQueries.forceReleaseUpdate(), MongoQueries.RUNNING);
        for (Bson q : all) {
            String json = q.toBsonDocument().toJson();
            assertThat(json).as("no client time in %s", json).doesNotContain("$date");
        }
        assertThat(MongoQueries.acquireFilter("n").toBsonDocument().toJson()).contains("$$NOW");
        assertThat(MongoQueries.heldBy("n", "t").toBsonDocument().toJson()).contains("$$NOW");
        assertThat(MongoQueries.acquireUpdate("o", "t", Duration.ofSeconds(1)).toBsonDocument().toJson()).contains("$currentDate");
    }

    @Test
    void contendersInsertingTheFirstDocumentAtOnceGetOneLeaseAndBusy() throws Exception {
        int contenders = 8;
        List<LockStore> stores = new ArrayList<>();
        for (int i = 0; i < contenders; i++) {
            stores.add(LockStores.open(MongoTestServer.url()));
        }
        ExecutorService pool = Executors.newFixedThreadPool(contenders);
        try {
            for (int round = 0; round < 20; round++) {
                String name = unique("race");
                CyclicBarrier start = new CyclicBarrier(contenders);
                List<Future<Optional<Grant>>> results = new ArrayList<>();
                for (int i = 0; i < contenders; i++) {
                    LockStore s = stores.get(i);
                    String token = "t" + i;
                    results.add(pool.submit(() -> {
                        start.await();
                        return s.tryAcquire(new AcquireRequest(name, "o", token, Duration.ofSeconds(10)));
                    }));
                }
                int granted = 0;
                for (Future<Optional<Grant>> f : results) {
                    granted += f.get(30, TimeUnit.SECONDS).isPresent() ? 1 : 0; // an exception would fail here
                }
                assertThat(granted).as("round %d", round).isEqualTo(1);
            }
        } finally {
            pool.shutdownNow();
            stores.forEach(LockStore::close);
        }
    }

    @Test
    void aStoreOverTheApplicationsClientLeavesItOpen() {
        LockStore store = MongoLockStore.builder(client, "turnstile_test").build();
        try (Turnstile t = Turnstile.builder(store).build()) {
            String name = unique("app");
            Lease lease = t.tryAcquire(name, LockOptions.lockAtMostFor(Duration.ofSeconds(5))).orElseThrow();
            assertThat(t.heldLocks()).extracting(LockInfo::name).contains(name);
            lease.release();
        }
        store.close();
        assertThat(client.getDatabase("turnstile_test").runCommand(new Document("ping", 1)).get("ok")).isNotNull();
        assertThat(store.description()).isEqualTo("MongoDB database turnstile_test (collection turnstile_locks)");
    }

    @Test
    void lockWritesCarryWriteConcernMajorityUnlessToldOtherwise() {
        List<BsonDocument> sent = java.util.Collections.synchronizedList(new ArrayList<>());
        CommandListener listener = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                if (event.getCommandName().equals("findAndModify") || event.getCommandName().equals("update")) {
                    sent.add(event.getCommand().clone());
                }
            }
        };
        MongoClientSettings settings = MongoClientSettings.builder().applyConnectionString(new ConnectionString(MongoTestServer.url()))
                .addCommandListener(listener).build();
        try (MongoClient listened = MongoClients.create(settings)) {
            String name = unique("wc");
            LockStore majority = MongoLockStore.builder(listened, "turnstile_test").build();
            majority.tryAcquire(new AcquireRequest(name, "o", "t1", Duration.ofSeconds(5))).orElseThrow();
            majority.extend(name, "t1", Duration.ofSeconds(5));
            majority.release(name, "t1", Duration.ZERO);
            // a new name: its insert, then its first fence set above the pruning floor; extend; release
            assertThat(sent).hasSize(4).allSatisfy(c -> assertThat(c.getDocument("writeConcern").get("w"))
                    .isEqualTo(new BsonString("majority")));
            sent.clear();
            LockStore one = MongoLockStore.builder(listened, "turnstile_test").writeConcern(WriteConcern.W1).build();
            one.tryAcquire(new AcquireRequest(name, "o", "t2", Duration.ofSeconds(5))).orElseThrow();
            assertThat(sent).hasSize(1);
            assertThat(sent.get(0).getDocument("writeConcern").get("w")).isEqualTo(new BsonInt32(1));
        }
    }

    @Test
    void builderRefusesBadInput() {
        assertThatThrownBy(() -> MongoLockStore.builder(null, "db")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("MongoClient");
        assertThatThrownBy(() -> MongoLockStore.builder(client, "")).hasMessageContaining("database name is empty");
        assertThatThrownBy(() -> MongoLockStore.builder(client, "a b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a valid MongoDB database name");
        assertThatThrownBy(() -> MongoLockStore.builder(client, "x".repeat(64))).hasMessageContaining("at most 63");
        assertThatThrownBy(() -> MongoLockStore.builder(client, "db").collection("system.locks"))
                .hasMessageContaining("not a usable collection name");
        assertThatThrownBy(() -> MongoLockStore.builder(client, "db").collection("a$b")).hasMessageContaining("'$'");
        assertThatThrownBy(() -> MongoLockStore.builder(client, "db").writeConcern(WriteConcern.UNACKNOWLEDGED))
                .hasMessageContaining("not acknowledged");
    }

    @Test
    void theApplicationClosingItsClientIsNotAnOutage() {
        MongoClient own = MongoClients.create(MongoTestServer.url());
        LockStore store = MongoLockStore.builder(own, "turnstile_test").build();
        own.close();
        assertThatThrownBy(() -> store.tryAcquire(new AcquireRequest(unique("gone"), "o", "t", Duration.ofSeconds(1))))
                .isInstanceOf(IllegalStateException.class).isNotInstanceOf(StoreUnavailableException.class);
    }
}
