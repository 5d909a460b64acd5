package dev.turnstile.bench;

import dev.turnstile.redis.RedisLockStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * S1 and S2 on a master with one replica ({@code bench.redisUrl}; {@code run.sh --only redis-replica}
 * starts both): what waiting for the replica's acknowledgement costs. Contenders, each slice beside
 * a floor slice: the raw Lettuce floor, Turnstile with {@code replicaAcks(0)} (no WAIT), and
 * Turnstile with its default (one replica must acknowledge: the acquire script and a
 * {@code WAIT 1 1000} go out together on the store's one connection), and
 * Redisson's RLock at its defaults, with the number of WAITs it sends per cycle, as the server counts them.
 */
public final class RedisReplicaBench {
    private RedisReplicaBench() {}

    /** How many WAITs the server counted per cycle of a contender: whether it waits for the replica at all. */
    static String waitsPerCycle(RedisClient lettuce, Contender contender) throws Exception {
        int cycles = 200;
        try (StatefulRedisConnection<String, String> c = lettuce.connect()) {
            long before = waitCalls(c.sync().info("commandstats"));
            for (int i = 0; i < cycles; i++) {
                contender.acquireRelease("bench-waits-" + contender.id());
            }
            long waits = waitCalls(c.sync().info("commandstats")) - before;
            return String.format(Locale.ROOT, "%d WAITs in %d acquire+release cycles, counted by the server", waits, cycles);
        }
    }

    private static long waitCalls(String commandStats) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("cmdstat_wait:calls=(\\d+)").matcher(commandStats);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    /**
     * Runs the slices and appends the table to the report.
     *
     * @param args ignored; use {@code -Dbench.*} system properties
     * @throws Exception if Redis cannot be reached
     */
    public static void main(String[] args) throws Exception {
        Logging.quiet();
        int slices = BenchConfig.slices();
        long sliceNanos = TimeUnit.MILLISECONDS.toNanos(BenchConfig.sliceMillis());
        long warmupNanos = TimeUnit.MILLISECONDS.toNanos(BenchConfig.warmupMillis());
        List<Integer> threadCounts = BenchConfig.threadCounts();
        Random shuffle = new Random(BenchConfig.seed());

        RedisClient lettuce = BenchRedis.lettuce();
        try (StatefulRedisConnection<String, String> c = lettuce.connect()) {
            String info = c.sync().info("replication");
            if (!info.contains("connected_slaves:1")) {
                throw new IllegalStateException(BenchRedis.url() + " should be a master with one replica; INFO says: " + info);
            }
        }
        List<Contender> contenders = new ArrayList<>();
        try (SliceRunner runner = new SliceRunner(Collections.max(threadCounts))) {
            RedisFloorContender floor = new RedisFloorContender(lettuce);
            contenders.add(floor);
            contenders.add(new TurnstileContender(RedisLockStore.builder(lettuce).replicaAcks(0).build(), true, "TURNSTILE_NO_WAIT"));
            TurnstileContender waiting = new TurnstileContender(RedisLockStore.builder(lettuce).build(), true, "TURNSTILE_WAIT_1");
            contenders.add(waiting);
            String turnstileWaits = waitsPerCycle(lettuce, waiting);
            RedissonContender redisson = new RedissonContender(BenchRedis.redisson(), true);
            contenders.add(redisson);
            String redissonWaits = waitsPerCycle(lettuce, redisson);
            Report report = AcquireReleaseBench.newReport("store");
            for (int threads : threadCounts) {
                SliceRunner.Paired<Contender, SliceResult> results = AcquireReleaseBench.measure(runner, contenders, threads, slices,
                        warmupNanos, sliceNanos, shuffle);
                System.err.printf("redis with a replica, %d thread(s): %d slices done%n", threads, slices);
                AcquireReleaseBench.addRows(report, "redis+replica", threads, results, floor);
            }
            report.emit("Redis with one replica: what the replica acknowledgement costs (S1, S2)", String.format(Locale.ROOT,
                    "%d slices of %d ms per contender, each beside a floor slice; warm-up %d ms. One master with one "
                            + "replica on this machine (loopback), both started by run.sh, no persistence. FLOOR = raw "
                            + "Lettuce `SET NX PX` + EVALSHA compare-and-delete (no WAIT). TURNSTILE_NO_WAIT = "
                            + "`RedisLockStore.builder(client).replicaAcks(0)`. TURNSTILE_WAIT_1 = the default: the master "
                            + "has a replica, so every acquire is followed (pipelined, on the store's one connection) "
                            + "by `WAIT 1 1000`; releases do not wait (%s). REDISSON = "
                            + "Redisson's RLock at its defaults (%s).",
                    slices, BenchConfig.sliceMillis(), BenchConfig.warmupMillis(), turnstileWaits, redissonWaits));
        } finally {
            contenders.forEach(Contender::close);
            lettuce.shutdown();
        }
    }
}
