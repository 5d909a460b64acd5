package dev.turnstile.mongo;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.TaskClaimer;
import dev.turnstile.testkit.ClaimWorker;
import java.nio.file.Path;
import java.time.Duration;

/** A MongoDB claiming worker in its own JVM: {@link ClaimWorker} over a MongoClaimStore. Exit code as {@link ClaimWorker#run}, 1 on errors. */
public final class MongoClaimWorkerProcess {
    private MongoClaimWorkerProcess() {}

    /**
     * Runs one worker.
     *
     * @param args mode ({@code work} or {@code hold}), MongoDB URL, collection, work directory, lock timeout ms
     * @throws Exception on errors (exit code 1)
     */
    public static void main(String[] args) throws Exception {
        int code;
        try (MongoClient client = MongoClients.create(args[1]);
                TaskClaimer claimer = TaskClaimer.builder(MongoClaimStore.builder(client, MongoTestServer.DATABASE,
                        ClaimTable.builder(args[2]).build()).build()).lockTimeout(Duration.ofMillis(Long.parseLong(args[4]))).build()) {
            code = ClaimWorker.run(args[0], claimer, Path.of(args[3]));
        }
        System.exit(code);
    }
}
