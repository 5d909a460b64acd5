package dev.turnstile.mongo;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import dev.turnstile.claim.Claim;
import dev.turnstile.claim.ClaimOutcome;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.TaskClaimer;
import dev.turnstile.testkit.ClaimWorker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Claiming across JVMs on mongo-java-server: several worker processes on one collection, and a worker killed with SIGKILL. */
class MongoClaimProcessTest {
    private static MongoClient client;
    @TempDir
    Path dir;

    @BeforeAll
    static void connect() {
        client = MongoClients.create(MongoTestServer.url());
    }

    @AfterAll
    static void disconnect() {
        client.close();
    }

    /** A fresh collection with its indexes and {@code tasks} tasks in the first phase. */
    private static ClaimTable createCollection(int tasks) {
        ClaimTable t = ClaimTable.builder("claimp_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12)).build();
        MongoClaimStore.builder(client, MongoTestServer.DATABASE, t).createIndexIfMissing(true).build();
        MongoClaimFixtures.insertTasks(collection(t), ClaimWorker.PHASES.get(0), System.currentTimeMillis(),
                IntStream.range(0, tasks).mapToObj(i -> "task" + i).toList());
        return t;
    }

    private static MongoCollection<Document> collection(ClaimTable t) {
        return client.getDatabase(MongoTestServer.DATABASE).getCollection(t.table());
    }

    private List<String> args(String mode, ClaimTable t, long timeoutMs) {
        return List.of(mode, MongoTestServer.url(), t.table(), dir.toString(), Long.toString(timeoutMs));
    }

    @Test
    void workerProcessesNeverOverlap() throws Exception {
        int tasks = 40;
        ClaimTable t = createCollection(tasks);
        try {
            List<Process> workers = new ArrayList<>();
            for (int w = 0; w < 3; w++) {
                workers.add(ClaimWorker.start(MongoClaimWorkerProcess.class, args("work", t, 30_000), dir.resolve("worker-" + w + ".log")));
            }
            ClaimWorker.assertEveryStepOnce(workers, dir, tasks);
            assertThat(collection(t).countDocuments(new Document("phase", "Deleted"))).isEqualTo(tasks);
        } finally {
            collection(t).drop();
        }
    }

    @Test
    void sigkilledWorkersTaskIsResumedAfterTheTimeout() throws Exception {
        ClaimTable t = createCollection(1);
        try (TaskClaimer claimer = TaskClaimer.builder(MongoClaimStore.builder(client, MongoTestServer.DATABASE, t).build())
                .lockTimeout(Duration.ofMillis(2000)).build()) {
            Path log = dir.resolve("holder.log");
            Process holder = ClaimWorker.start(MongoClaimWorkerProcess.class, args("hold", t, 2000), log);
            Claim resumed = ClaimWorker.killAndResume(holder, log, claimer);
            assertThat(resumed.moveTo(ClaimWorker.PHASES.get(1))).isEqualTo(ClaimOutcome.APPLIED);
        } finally {
            collection(t).drop();
        }
    }
}
