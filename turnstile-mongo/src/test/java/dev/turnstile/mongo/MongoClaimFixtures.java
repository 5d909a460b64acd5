package dev.turnstile.mongo;

import com.mongodb.client.MongoCollection;
import java.util.Date;
import java.util.List;
import org.bson.Document;

/** Task documents as the tests insert and read them, with the default field names. */
final class MongoClaimFixtures {
    private MongoClaimFixtures() {}

    /** Free tasks: {@code locked_at} at the epoch, version 0. */
    static void insertTasks(MongoCollection<Document> tasks, String phase, long updatedAtMillis, List<String> ids) {
        List<Document> docs = ids.stream().map(id -> new Document("id", id).append("phase", phase)
                .append("locked_at", new Date(0)).append("updated_at", new Date(updatedAtMillis)).append("claim_version", 0L))
                .toList();
        tasks.insertMany(docs);
    }

    static Document task(MongoCollection<Document> tasks, String id) {
        Document d = tasks.find(new Document("id", id)).first();
        if (d == null) {
            throw new IllegalStateException("no task " + id + " in " + tasks.getNamespace());
        }
        return d;
    }
}
