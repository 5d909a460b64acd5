package dev.turnstile.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs one contender with N threads for a fixed time, each thread cycling on its own lock name,
 * and records every cycle's latency. Threads start together from a latch so that the slice's
 * throughput is over a common window.
 */
final class SliceRunner implements AutoCloseable {
    private final ExecutorService threads;

    SliceRunner(int maxThreads) {
        this.threads = Executors.newFixedThreadPool(maxThreads, r -> {
            Thread t = new Thread(r, "bench-worker");
            t.setDaemon(true);
            return t;
        });
    }

    private record ThreadResult(long[] latencies, long failures, long endNanos, Exception firstError) {}

    SliceResult run(Contender contender, int threadCount, long durationNanos) throws Exception {
        CountDownLatch ready = new CountDownLatch(threadCount);
        CountDownLatch go = new CountDownLatch(1);
        long[] start = new long[1];
        List<Future<ThreadResult>> futures = new ArrayList<>();
        for (int i = 0; i < threadCount; i++) {
            // One distinct name per thread (and per contender): the cycles never contend with each other.
            String lockName = "bench-" + contender.id().toLowerCase(Locale.ROOT) + "-t" + i;
            futures.add(threads.submit(() -> {
                ready.countDown();
                go.await();
                return cycle(contender, lockName, start[0] + durationNanos);
            }));
        }
        ready.await();
        start[0] = System.nanoTime(); // published to the workers by go.countDown()
        go.countDown();

        List<long[]> all = new ArrayList<>();
        long failures = 0;
        long end = start[0];
        int total = 0;
        Exception firstError = null;
        for (Future<ThreadResult> f : futures) {
            ThreadResult r = f.get();
            all.add(r.latencies());
            total += r.latencies().length;
            failures += r.failures();
            end = Math.max(end, r.endNanos());
            firstError = firstError != null ? firstError : r.firstError();
        }
        if (firstError != null) {
            System.err.println(contender.id() + ": a cycle threw " + firstError);
        }
        long[] merged = new long[total];
        int at = 0;
        double sum = 0;
        for (long[] part : all) {
            System.arraycopy(part, 0, merged, at, part.length);
            at += part.length;
            for (long v : part) {
                sum += v;
            }
        }
        Arrays.sort(merged);
        return new SliceResult(total, failures, end - start[0], total == 0 ? Double.NaN : sum / total,
                Stats.percentile(merged, 50), Stats.percentile(merged, 99));
    }

    private static ThreadResult cycle(Contender contender, String lockName, long deadline) {
        LongList latencies = new LongList(4096);
        long failures = 0;
        Exception firstError = null;
        long t = System.nanoTime();
        while (t - deadline < 0) {
            boolean ok;
            try {
                ok = contender.acquireRelease(lockName);
            } catch (Exception e) {
                ok = false;
                if (firstError == null) {
                    firstError = e;
                }
            }
            long after = System.nanoTime();
            latencies.add(after - t);
            if (!ok) {
                failures++;
            }
            t = after;
        }
        return new ThreadResult(latencies.toArray(), failures, t, firstError);
    }

    @Override
    public void close() {
        threads.shutdownNow();
    }
}
