package dev.turnstile.bench;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import dev.turnstile.mongo.MongoLockStore;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.provider.mongo.MongoLockProvider;

/**
 * The MongoDB side by side, on one server ({@code bench.mongoUrl}, a database path required), in
 * one JVM and on one {@link MongoClient}: uncontended acquire+release with 1 and 8 threads
 * ({@code bench.threads}), each thread on its own name, for the raw driver floor
 * ({@link MongoFloorContender}), the store's own commands sent raw
 * ({@link MongoServerClockFloorContender}), Turnstile's {@link MongoLockStore} and ShedLock's
 * {@code MongoLockProvider}; ratios to the floor of the same slice, as {@link AcquireReleaseBench}
 * does for SQL.
 */
public final class MongoBench {
    private MongoBench() {}

    /**
     * Runs the scenario and appends its table to the report.
     *
     * @param args ignored; use {@code -Dbench.*} system properties
     * @throws Exception if the server cannot be reached
     */
    public static void main(String[] args) throws Exception {
        Logging.quiet();
        String url = System.getProperty("bench.mongoUrl", "mongodb://127.0.0.1:27017/bench");
        String database = new com.mongodb.ConnectionString(url).getDatabase();
        int slices = BenchConfig.slices();
        long sliceNanos = TimeUnit.MILLISECONDS.toNanos(BenchConfig.sliceMillis());
        long warmupNanos = TimeUnit.MILLISECONDS.toNanos(BenchConfig.warmupMillis());
        List<Integer> threadCounts = BenchConfig.threadCounts();
        Random shuffle = new Random(BenchConfig.seed());
        List<Contender> contenders = new ArrayList<>();
        try (MongoClient client = MongoClients.create(url);
                SliceRunner runner = new SliceRunner(Collections.max(threadCounts))) {
            MongoFloorContender floor = new MongoFloorContender(client, database);
            contenders.add(floor);
            contenders.add(new MongoServerClockFloorContender(client, database));
            contenders.add(new TurnstileContender(MongoLockStore.builder(client, database).collection("bench_turnstile").build(), true));
            contenders.add(new ShedLockContender(new MongoLockProvider(client.getDatabase(database))));
            Report report = AcquireReleaseBench.newReport("store");
            for (int threads : threadCounts) {
                SliceRunner.Paired<Contender, SliceResult> results = AcquireReleaseBench.measure(runner, contenders, threads, slices,
                        warmupNanos, sliceNanos, shuffle);
                System.err.printf("mongo, %d thread(s): %d slices done%n", threads, slices);
                AcquireReleaseBench.addRows(report, "mongo", threads, results, floor);
            }
            report.emit("MongoDB: acquire + release, uncontended", String.format(Locale.ROOT,
                    "%d slices of %d ms per contender, each beside a floor slice (pairs in shuffled order, alternating which goes "
                            + "first); warm-up %d ms per contender; one MongoClient (driver %s) shared by all, server %s. "
                            + "FLOOR = one `findOneAndUpdate` with upsert on `{_id: name, lockUntil <= client now}` setting "
                            + "token and lockUntil (the client's clock), then `deleteOne({_id, token})`. FLOOR_SERVER_CLOCK = "
                            + "the two commands Turnstile's store sends, written out and sent raw (write concern majority): "
                            + "`findOneAndUpdate` upsert judged by `$$NOW` in `$expr`, `$currentDate`, `$inc` of the fence; "
                            + "owner-checked `updateOne` release. TURNSTILE = Turnstile "
                            + "over `MongoLockStore.builder(client, db)` (write concern majority): one `findOneAndUpdate` "
                            + "upsert judged by `$$NOW` in `$expr`, `$currentDate`, `$inc` of the fence; one owner-checked "
                            + "`updateOne` release that keeps the document. SHEDLOCK = ShedLock's `MongoLockProvider` %s "
                            + "over shedlock-core %s (client clock; unlock is an update of lockUntil). Ratios are per slice against the FLOOR slice "
                            + "beside it: median [min–max]; above 1 means slower than the floor.",
                    slices, BenchConfig.sliceMillis(), BenchConfig.warmupMillis(), RedisBench.version(MongoClient.class),
                    System.getProperty("bench.mongoServer", "as given by bench.mongoUrl"), RedisBench.version(MongoLockProvider.class),
                    RedisBench.version(net.javacrumbs.shedlock.core.LockProvider.class)));
        } finally {
            for (Contender c : contenders) {
                c.close();
            }
        }
    }
}
