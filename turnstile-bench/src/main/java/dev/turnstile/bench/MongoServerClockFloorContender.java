package dev.turnstile.bench;

import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import java.util.List;
import org.bson.Document;

/**
 * A second MongoDB floor: the two commands Turnstile's store sends, written out by hand and sent
 * raw on the same client, with nothing around them (no lease object, no keep-alive, no result
 * mapping). The lease is judged by the server's clock, {@code $$NOW} inside {@code $expr}, and
 * the times are {@code $currentDate}; the fence is an {@code $inc}; the release is an
 * owner-checked {@code updateOne} that keeps the document; write concern majority, as the store's.
 * Beside {@link MongoFloorContender} it
 * splits Turnstile's cost into what the server-clock form costs the server and what the library
 * adds. Collection {@code bench_floor_server_clock}.
 */
final class MongoServerClockFloorContender implements Contender {
    private static final long TTL_MILLIS = 30_000;
    private static final FindOneAndUpdateOptions UPSERT = new FindOneAndUpdateOptions().upsert(true).returnDocument(ReturnDocument.AFTER);
    private static final Document LOCK_UNTIL = new Document("$max", List.of(
            new Document("$add", List.of("$renewedAt", "$ttlMs")),
            new Document("$add", List.of("$lockedAt", "$minHoldMs"))));
    private static final Document ENDED = new Document("$lte", List.of(LOCK_UNTIL, "$$NOW"));
    private static final Document RUNNING = new Document("$gt", List.of(LOCK_UNTIL, "$$NOW"));

    private final MongoCollection<Document> locks;

    MongoServerClockFloorContender(MongoClient client, String database) {
        this.locks = client.getDatabase(database).getCollection("bench_floor_server_clock").withWriteConcern(WriteConcern.MAJORITY);
    }

    @Override
    public String id() {
        return "FLOOR_SERVER_CLOCK";
    }

    @Override
    public boolean acquireRelease(String lockName) {
        String token = FloorContender.newToken();
        Document taken = locks.findOneAndUpdate(new Document("_id", lockName).append("$expr", ENDED),
                new Document("$set", new Document("owner", "bench").append("token", token).append("ttlMs", TTL_MILLIS)
                        .append("minHoldMs", 0L))
                        .append("$currentDate", new Document("lockedAt", true).append("renewedAt", true))
                        .append("$inc", new Document("fence", 1L)),
                UPSERT);
        if (taken == null || !token.equals(taken.getString("token"))) {
            return false;
        }
        return locks.updateOne(new Document("_id", lockName).append("token", token).append("$expr", RUNNING),
                new Document("$set", new Document("ttlMs", 0L).append("minHoldMs", 0L))
                        .append("$currentDate", new Document("renewedAt", true))).getMatchedCount() == 1;
    }
}
