package dev.turnstile.examples.claiming;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.turnstile.claim.ClaimOutcome;
import dev.turnstile.mongo.MongoClaimStore;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Date;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.Document;

/**
 * The gateway example on MongoDB: one document per gateway in collection {@code example_gateways},
 * claimed by {@link MongoClaimStore}. A gateway's records are embedded in its document, the MongoDB
 * way, so deleting them is one of the claim's own guarded writes: it happens only while the claim
 * still holds the gateway (the version fences it, as the SQL variant's {@code EXISTS} does).
 */
final class MongoGateways {
    private MongoGateways() {}

    static void main(String command, String url, String arg) throws Exception {
        String database = new ConnectionString(url).getDatabase();
        if (database == null) {
            throw new IllegalArgumentException("the MongoDB URL names no database: add one, for example mongodb://127.0.0.1:27017/app");
        }
        try (MongoClient client = MongoClients.create(url)) {
            MongoDatabase db = client.getDatabase(database);
            switch (command) {
                case "setup" -> setup(client, db, database, Integer.parseInt(arg));
                case "worker" -> GatewayDeletion.work(MongoClaimStore.builder(client, database, GatewayDeletion.GATEWAYS).build(), arg,
                        gateway -> {
                            if (gateway.update(Collections.singletonMap("records", null)) == ClaimOutcome.LOST) {
                                throw new IllegalStateException("gateway " + gateway.id() + " was claimed by someone else");
                            }
                        });
                case "report" -> report(db);
                default -> throw new IllegalArgumentException("usage: setup URL N | worker URL NAME | report URL");
            }
        }
    }

    private static void setup(MongoClient client, MongoDatabase db, String database, int n) {
        MongoCollection<Document> gateways = db.getCollection(GatewayDeletion.GATEWAYS.table());
        gateways.drop();
        // The claiming indexes, as MongoClaimStore's check asks for them.
        MongoClaimStore.builder(client, database, GatewayDeletion.GATEWAYS).createIndexIfMissing(true).build();
        List<Document> docs = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            docs.add(new Document("id", String.format("gw-%02d", i)).append("phase", GatewayDeletion.PHASES.get(0))
                    .append("locked_at", new Date(0)).append("updated_at", new Date()).append("claim_version", 0L)
                    .append("records", IntStream.range(0, 3).boxed().toList()));
        }
        gateways.insertMany(docs);
        System.out.println("created " + n + " gateways in phase " + GatewayDeletion.PHASES.get(0));
    }

    private static void report(MongoDatabase db) {
        MongoCollection<Document> gateways = db.getCollection(GatewayDeletion.GATEWAYS.table());
        for (String phase : GatewayDeletion.PHASES.stream().sorted().toList()) {
            long count = gateways.countDocuments(new Document("phase", phase));
            if (count > 0) {
                System.out.println("phase " + phase + ": " + count + " gateways");
            }
        }
        int left = 0;
        for (Document d : gateways.find()) {
            List<?> records = d.getList("records", Object.class);
            left += records == null ? 0 : records.size();
        }
        System.out.println("records left: " + left);
    }
}
