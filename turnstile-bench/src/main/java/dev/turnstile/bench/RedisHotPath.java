package dev.turnstile.bench;

import dev.turnstile.redis.RedisLockStore;
import io.lettuce.core.RedisClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;

/**
 * One contender's uncontended acquire+release loop (S1/S2 without the floor beside it), for a
 * profiler to attach to: {@code java ... RedisHotPath turnstile|floor SECONDS THREADS}. Prints the
 * cycles per second of the recorded part. The first third of the time is warm-up.
 */
public final class RedisHotPath {
    private RedisHotPath() {}

    private static java.util.Map<String, Long> threadCpu() {
        var mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        java.util.Map<String, Long> out = new java.util.TreeMap<>();
        for (long id : mx.getAllThreadIds()) {
            var info = mx.getThreadInfo(id);
            long t = mx.getThreadCpuTime(id);
            if (info != null && t > 0) {
                out.merge(info.getThreadName() + "#" + id, t, Long::sum);
                out.merge(info.getThreadName() + "#" + id + " bytes allocated", mx.getThreadAllocatedBytes(id) * 1000, Long::sum);
            }
        }
        return out;
    }

    /**
     * Runs the loop.
     *
     * @param args contender ({@code turnstile} or {@code floor}), seconds (default 20), threads (default 1)
     * @throws Exception if Redis cannot be reached
     */
    public static void main(String[] args) throws Exception {
        Logging.quiet();
        String which = args.length > 0 ? args[0] : "turnstile";
        long seconds = args.length > 1 ? Long.parseLong(args[1]) : 20;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        RedisClient lettuce = BenchRedis.lettuce();
        Contender c = switch (which) {
            case "floor" -> new RedisFloorContender(lettuce);
            case "turnstile" -> new TurnstileContender(RedisLockStore.builder(lettuce).build(), true);
            default -> throw new IllegalArgumentException("contender is floor or turnstile, not " + which);
        };
        LongAdder cycles = new LongAdder();
        long warmupEnd = System.nanoTime() + seconds * 1_000_000_000L / 3;
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long[] recordedFrom = new long[1];
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            String name = "bench-prof-" + which + "-" + t;
            Thread w = new Thread(() -> {
                boolean counting = false;
                while (true) {
                    long now = System.nanoTime();
                    if (now > end) {
                        return;
                    }
                    boolean ok;
                    try {
                        ok = c.acquireRelease(name);
                    } catch (Exception e) {
                        throw new IllegalStateException(name + " failed", e);
                    }
                    if (!ok) {
                        throw new IllegalStateException(name + " was busy");
                    }
                    if (counting) {
                        cycles.increment();
                    } else if (now > warmupEnd) {
                        counting = true;
                    }
                }
            }, name);
            workers.add(w);
            w.start();
        }
        recordedFrom[0] = warmupEnd;
        var os = (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        Thread.sleep(Math.max(0, (warmupEnd - System.nanoTime()) / 1_000_000));
        long cpu0 = os.getProcessCpuTime();
        long cycles0 = cycles.sum();
        java.util.Map<String, Long> threadCpu0 = threadCpu();
        Thread.sleep(Math.max(0, (end - System.nanoTime()) / 1_000_000 - 200));
        java.util.Map<String, Long> threadCpu1 = threadCpu();
        long cyclesAt1 = cycles.sum();
        for (Thread w : workers) {
            w.join();
        }
        long cpu1 = os.getProcessCpuTime();
        if (Boolean.getBoolean("bench.threadCpu")) {
            threadCpu1.forEach((k, v) -> {
                long d = v - threadCpu0.getOrDefault(k, 0L);
                if (d > 0) {
                    System.out.printf(Locale.ROOT, "  thread %-40s %.1f µs per cycle%n", k, d / 1e3 / Math.max(1, cyclesAt1 - cycles0));
                }
            });
        }
        System.out.printf(Locale.ROOT, "%s: client process CPU %.1f µs per cycle%n", which,
                (cpu1 - cpu0) / 1e3 / Math.max(1, cycles.sum() - cycles0));
        double secs = (end - recordedFrom[0]) / 1e9;
        System.out.printf(Locale.ROOT, "%s, %d thread(s): %.0f cycles/s, %.1f µs per cycle per thread%n", which, threads,
                cycles.sum() / secs, threads * secs * 1e6 / Math.max(1, cycles.sum()));
        c.close();
        lettuce.shutdown();
    }
}
