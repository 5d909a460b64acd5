package dev.turnstile.mongo;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.turnstile.claim.ClaimStore;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.testkit.ClaimStoreContract;
import dev.turnstile.testkit.PartitionProxy;
import java.net.URI;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/** The whole claiming contract against mongo-java-server (see MongoTestServer); each store has a client of its own. */
class MongoClaimContractTest extends ClaimStoreContract {
    private static MongoClient reader;
    private final List<MongoClient> clients = new ArrayList<>();

    @BeforeAll
    static void connect() {
        reader = MongoClients.create(MongoTestServer.url());
    }

    @AfterAll
    static void disconnect() {
        reader.close();
    }

    @AfterEach
    void closeClients() {
        clients.forEach(MongoClient::close);
        clients.clear();
    }

    @Override
    protected ClaimStore newStore(ClaimTable table) {
        MongoClient client = MongoClients.create(MongoTestServer.url());
        clients.add(client);
        return MongoClaimStore.builder(client, MongoTestServer.DATABASE, table).createIndexIfMissing(true).build();
    }

    /** A client whose every connection to the test server passes through a {@link PartitionProxy}. */
    @Override
    protected Partitionable partitionableStore(ClaimTable table) {
        URI server = URI.create(MongoTestServer.url());
        PartitionProxy proxy = new PartitionProxy(server.getHost(), server.getPort());
        MongoClient client = MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/" + MongoTestServer.DATABASE);
        clients.add(client);
        return new Partitionable(MongoClaimStore.builder(client, MongoTestServer.DATABASE, table).createIndexIfMissing(true).build(),
                proxy);
    }

    /** A document with no updated_at field at all. */
    @Override
    protected void insertTaskWithoutUpdatedAt(ClaimTable table, String phase, String id) {
        collection(table).insertOne(new Document("id", id).append("phase", phase).append("locked_at", new Date(0))
                .append("claim_version", 0L));
    }

    @Override
    protected void insertTasks(ClaimTable table, String phase, long updatedAtMillis, List<String> ids) {
        MongoClaimFixtures.insertTasks(collection(table), phase, updatedAtMillis, ids);
    }

    @Override
    protected String phaseOf(ClaimTable table, String id) {
        return MongoClaimFixtures.task(collection(table), id).getString("phase");
    }

    @Override
    protected long lockedAtOf(ClaimTable table, String id) {
        return MongoClaimFixtures.task(collection(table), id).getDate("locked_at").getTime();
    }

    @Override
    protected void dropTable(ClaimTable table) {
        collection(table).drop();
    }

    private static MongoCollection<Document> collection(ClaimTable table) {
        return reader.getDatabase(MongoTestServer.DATABASE).getCollection(table.table());
    }
}
