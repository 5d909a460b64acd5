package dev.turnstile.bench;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import java.util.Date;
import org.bson.Document;

/**
 * The raw MongoDB floor, on the same client as Turnstile's store: one {@code findOneAndUpdate} with
 * upsert that takes a free or expired lock document ({@code lockUntil} compared with this JVM's clock,
 * as ShedLock and the lockedAt examples do), then a {@code deleteOne} by name and token. The least a
 * Mongo lock does, and no safer: no server clock, no fence. Collection {@code bench_floor}.
 */
final class MongoFloorContender implements Contender {
    private static final long TTL_MILLIS = 30_000;
    private static final FindOneAndUpdateOptions UPSERT = new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER);

    private final MongoCollection<Document> locks;

    MongoFloorContender(MongoClient client, String database) {
        this.locks = client.getDatabase(database).getCollection("bench_floor");
    }

    @Override
    public String id() {
        return "FLOOR";
    }

    @Override
    public boolean acquireRelease(String lockName) {
        String token = FloorContender.newToken();
        long now = System.currentTimeMillis();
        Document taken = locks.findOneAndUpdate(new Document("_id", lockName).append("lockUntil", new Document("$lte", new Date(now))),
                new Document("$set", new Document("token", token).append("lockUntil", new Date(now + TTL_MILLIS))), UPSERT);
        if (taken == null || !token.equals(taken.getString("token"))) {
            return false;
        }
        return locks.deleteOne(new Document("_id", lockName).append("token", token)).getDeletedCount() == 1;
    }
}
