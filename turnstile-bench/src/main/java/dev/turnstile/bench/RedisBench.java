package dev.turnstile.bench;

import dev.turnstile.redis.RedisLockStore;
import io.lettuce.core.RedisClient;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;
import org.redisson.api.RedissonClient;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;

/**
 * The Redis side by side, on one server ({@code bench.redisUrl}), in one JVM:
 *
 * <ul>
 *   <li>S1 and S2: uncontended acquire+release with 1 and 8 threads ({@code bench.threads}), each
 *       thread on its own name, for the raw Lettuce floor, Turnstile, Redisson, ShedLock and Spring
 *       Integration's RedisLockRegistry in its spin and pub-sub modes; ratios to the floor of the
 *       same slice, exactly as {@link AcquireReleaseBench} does for SQL.
 *   <li>S3: {@code bench.waitThreads} threads of this JVM blocking on one name (acquire with wait,
 *       hold {@code bench.waitHoldMicros}, release, loop), for the contenders that can wait.
 * </ul>
 *
 * <p>The cross-process variant (S3x) is {@link HandoffBench} with the argument {@code redis}.
 * Writes two Markdown sections and {@code redis-ratios.png} beside the report. Settings are system
 * properties; see {@link BenchConfig}.
 */
public final class RedisBench {
    private RedisBench() {}

    /**
     * Runs S1, S2 and S3 and appends their tables to the report.
     *
     * @param args ignored; use {@code -Dbench.*} system properties
     * @throws Exception if Redis cannot be reached
     */
    public static void main(String[] args) throws Exception {
        Logging.quiet();
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
        int slices = BenchConfig.slices();
        long sliceNanos = TimeUnit.MILLISECONDS.toNanos(BenchConfig.sliceMillis());
        long warmupNanos = TimeUnit.MILLISECONDS.toNanos(BenchConfig.warmupMillis());
        List<Integer> threadCounts = BenchConfig.threadCounts();
        int waitThreads = BenchConfig.waitThreads();
        long holdNanos = TimeUnit.MICROSECONDS.toNanos(BenchConfig.waitHoldMicros());
        Random shuffle = new Random(BenchConfig.seed());

        System.err.printf("redis: %d stale bench keys removed%n", BenchRedis.deleteBenchKeys());
        RedisClient lettuce = BenchRedis.lettuce();
        RedissonClient redisson = BenchRedis.redisson();
        LettuceConnectionFactory springFactory = BenchRedis.springFactory();
        List<Contender> contenders = new ArrayList<>();
        try (SliceRunner runner = new SliceRunner(Math.max(Collections.max(threadCounts), waitThreads))) {
            RedisFloorContender floor = new RedisFloorContender(lettuce);
            contenders.add(floor);
            TurnstileContender turnstile = new TurnstileContender(RedisLockStore.builder(lettuce).build(), true);
            contenders.add(turnstile);
            RedissonContender redissonLock = new RedissonContender(redisson, false);
            contenders.add(redissonLock);
            // ShedLock's keys: bench:shedlock:<name> and bench:shedlock-safe:<name>. Its Spring Data
            // provider unlocks with a plain DEL by default; with safeUpdate(true) (7.x) the unlock is
            // a compare-and-delete script, owner-checked like the floor's.
            contenders.add(new ShedLockContender(
                    new RedisLockProvider.Builder(springFactory).keyPrefix("bench").environment("shedlock").build()));
            contenders.add(new ShedLockContender(new RedisLockProvider.Builder(springFactory).keyPrefix("bench")
                    .environment("shedlock-safe").safeUpdate(true).build(), "SHEDLOCK_SAFE"));
            SpringContender spin = SpringContender.redis(springFactory, RedisLockRegistry.RedisLockType.SPIN_LOCK);
            contenders.add(spin);
            SpringContender pubSub = SpringContender.redis(springFactory, RedisLockRegistry.RedisLockType.PUB_SUB_LOCK);
            contenders.add(pubSub);

            // S1, S2.
            Report report = AcquireReleaseBench.newReport("store");
            List<String> chartCategories = contenders.stream().skip(1).map(Contender::id).toList();
            BarChart chart = new BarChart("Redis: acquire + release latency ÷ raw Lettuce floor",
                    String.format(Locale.ROOT, "dot: median over %d slices of %d ms, bar: min–max; each slice beside a floor slice; same server", slices,
                            BenchConfig.sliceMillis()),
                    "mean latency ÷ floor's (same slice)", "%.2f×", chartCategories);
            for (int t = 0; t < threadCounts.size(); t++) {
                int threads = threadCounts.get(t);
                SliceRunner.Paired<Contender, SliceResult> results = AcquireReleaseBench.measure(runner, contenders, threads, slices,
                        warmupNanos, sliceNanos, shuffle);
                System.err.printf("redis, %d thread(s): %d slices done%n", threads, slices);
                AcquireReleaseBench.addRows(report, "redis", threads, results, floor);
                addSeries(chart, "S" + (t + 1) + ": " + threads + (threads == 1 ? " thread" : " threads") + ", own names",
                        results, contenders);
            }
            Path png = Report.chartFile("redis-ratios.png");
            chart.reference(1.0, "FLOOR = 1.0").write(png);
            report.emit("Redis: acquire + release, uncontended (S1, S2)", String.format(Locale.ROOT,
                    "%d slices of %d ms per contender, each beside a floor slice (pairs in shuffled order, alternating "
                            + "which goes first); warm-up %d ms per contender; one Redis "
                            + "server, every contender's keys deleted before and after. FLOOR = raw Lettuce on one shared "
                            + "connection: `SET key token NX PX 30000`, then an EVALSHA compare-and-delete, fresh random token "
                            + "per cycle. TURNSTILE = Turnstile over `RedisLockStore.builder(RedisClient)` (one EVALSHA "
                            + "acquire: INCR of the fence, SET NX PX of the readable value; one EVALSHA release: "
                            + "GET, token check, DEL, a look at the waiter queue, PUBLISH). REDISSON = `RLock.tryLock(0, 30, SECONDS)` + "
                            + "`unlock()`, default config. SHEDLOCK = ShedLock %s `shedlock-provider-redis-spring` "
                            + "RedisLockProvider over Spring Data Redis's LettuceConnectionFactory (ShedLock's own Lettuce "
                            + "provider is not on Maven Central), by default: its unlock is a plain DEL, not owner-checked. "
                            + "SHEDLOCK_SAFE = the same with `safeUpdate(true)`: SET NX PX, then a compare-and-delete script, "
                            + "owner-checked like the floor. SPRING_SPIN / SPRING_PUBSUB = Spring Integration %s "
                            + "RedisLockRegistry in SPIN_LOCK / PUB_SUB_LOCK mode, `obtain(name).tryLock()` + `unlock()`, "
                            + "on the same factory. Ratios are per slice against the FLOOR slice beside it: median [min–max]; "
                            + "above 1 means slower than the floor.",
                    slices, BenchConfig.sliceMillis(), BenchConfig.warmupMillis(), version(RedisLockProvider.class),
                    version(RedisLockRegistry.class)), png);

            // S3.
            List<WaitingContender> waiting = List.of(turnstile, redissonLock, spin, pubSub);
            Map<WaitingContender, List<WaitSliceResult>> waits = SliceRunner.interleave(waiting, slices, warmupNanos,
                    sliceNanos, shuffle, (c, nanos) -> runner.runWaiting(c, waitThreads,
                            "bench-s3-" + c.id().toLowerCase(Locale.ROOT), holdNanos, nanos));
            System.err.printf("redis, %d threads on one name: %d slices done%n", waitThreads, slices);
            Report s3 = new Report("contender", "threads", "acquisitions/s (median)", "acquisitions/s [min–max]",
                    "mean acquire", "p99 acquire", "per-thread share (all slices)", "worst slice's smallest share",
                    "failures", "overlaps");
            for (Map.Entry<WaitingContender, List<WaitSliceResult>> e : waits.entrySet()) {
                addWaitRow(s3, e.getKey().id(), waitThreads, e.getValue());
            }
            s3.emit("Redis: " + waitThreads + " threads of one JVM blocking on one name (S3)", String.format(Locale.ROOT,
                    "%d slices of %d ms per contender, interleaved; warm-up %d ms. Every thread loops acquire (wait up to "
                            + "30 s), hold (%s), release, on one name shared by the %d threads, which share one client of "
                            + "each library (one Turnstile, one RedissonClient, one RedisLockRegistry). Acquire time includes "
                            + "the wait. Fair share would be %.1f%% each. Overlaps count holds that began while another "
                            + "thread held the lock (must be 0). TURNSTILE: `acquire(name, lockAtMostFor 30 s, maxWait)`; "
                            + "REDISSON: `tryLock(maxWait, 30, SECONDS)`; SPRING_*: `tryLock(maxWait)` (spin mode polls "
                            + "every 100 ms, pub-sub mode is woken by the unlock). ShedLock cannot wait, so it is absent.",
                    slices, BenchConfig.sliceMillis(), BenchConfig.warmupMillis(),
                    holdNanos == 0 ? "none" : "LockSupport.parkNanos " + holdNanos / 1000 + " µs; Linux adds ~50 µs",
                    waitThreads, 100.0 / waitThreads));
        } finally {
            for (Contender c : contenders) {
                c.close();
            }
            System.err.printf("redis: %d bench keys removed%n", BenchRedis.deleteBenchKeys());
            springFactory.destroy();
            redisson.shutdown();
            lettuce.shutdown();
        }
    }

    private static void addSeries(BarChart chart, String name, SliceRunner.Paired<Contender, SliceResult> results,
            List<Contender> contenders) {
        int n = contenders.size() - 1;
        double[] median = new double[n];
        double[] min = new double[n];
        double[] max = new double[n];
        for (int i = 0; i < n; i++) {
            Contender c = contenders.get(i + 1);
            double[] r = AcquireReleaseBench.latencyRatios(results.results().get(c), results.floorOf().get(c));
            median[i] = Stats.median(r);
            min[i] = Stats.min(r);
            max[i] = Stats.max(r);
        }
        chart.series(name, median, min, max);
    }

    private static void addWaitRow(Report report, String id, int threads, List<WaitSliceResult> slices) {
        int n = slices.size();
        double[] rate = new double[n];
        double[] mean = new double[n];
        double[] p99 = new double[n];
        long[] perThread = new long[threads];
        long total = 0;
        long failures = 0;
        long overlaps = 0;
        double worstMin = 1;
        for (int i = 0; i < n; i++) {
            WaitSliceResult r = slices.get(i);
            rate[i] = r.acquisitionsPerSecond();
            mean[i] = r.meanWaitNanos();
            p99[i] = r.p99WaitNanos();
            for (int t = 0; t < threads; t++) {
                perThread[t] += r.perThread()[t];
            }
            total += r.acquisitions();
            failures += r.failures();
            overlaps += r.overlaps();
            worstMin = Math.min(worstMin, r.minShare());
        }
        long minT = Long.MAX_VALUE;
        long maxT = 0;
        for (long c : perThread) {
            minT = Math.min(minT, c);
            maxT = Math.max(maxT, c);
        }
        double all = Math.max(1, total);
        report.row(id, threads, Report.number(Stats.median(rate), 0),
                String.format(Locale.ROOT, "[%.0f–%.0f]", Stats.min(rate), Stats.max(rate)),
                Report.micros(Stats.median(mean)), Report.micros(Stats.median(p99)),
                String.format(Locale.ROOT, "%.1f%%–%.1f%%", 100 * minT / all, 100 * maxT / all),
                String.format(Locale.ROOT, "%.1f%%", 100 * worstMin),
                failures == 0 ? "0" : "**FAILED " + failures + "**",
                overlaps == 0 ? "0" : "**" + overlaps + "**");
    }

    /** The library's version, from its manifest or else its jar's file name. */
    static String version(Class<?> c) {
        String v = c.getPackage().getImplementationVersion();
        if (v != null) {
            return v;
        }
        try {
            String jar = Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).getFileName().toString();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("-(\\d[\\w.\\-]*)\\.jar$").matcher(jar);
            return m.find() ? m.group(1) : "(version unknown)";
        } catch (Exception e) {
            return "(version unknown)";
        }
    }
}
