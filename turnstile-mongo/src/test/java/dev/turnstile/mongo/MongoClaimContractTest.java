package dev.turnstile.mongo;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.turnstile.claim.ClaimStore;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.testkit.ClaimStoreContract;
import java.util.ArrayList;
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
