package dev.turnstile.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs one contender with N threads for a fixed time and records every cycle's latency: either
 * each thread cycling acquire+release on its own lock name ({@link #run}), or all threads blocking
 * on one shared name ({@link #runWaiting}). Threads start together from a latch so that the
 * slice's throughput is over a common window. {@link #interleave} runs several contenders in
 * shuffled, interleaved slices.
 */
final class SliceRunner implements AutoCloseable {
    /** Measures one contender for a given time. */
    @FunctionalInterface
    interface Measure<C, R> {
        R run(C contender, long durationNanos) throws Exception;
    }

    /**
     * Warms every contender up once, then runs {@code slices} rounds in which every contender gets
     * one slice, in an order shuffled per round, so a burst of machine noise hits them all alike.
     *
     * @return each contender's slice results, in slice order (index i of every list is round i)
     */
    static <C, R> Map<C, List<R>> interleave(List<C> contenders, int slices, long warmupNanos, long sliceNanos,
            Random shuffle, Measure<C, R> measure) throws Exception {
        for (C c : contenders) {
            measure.run(c, warmupNanos);
        }
        Map<C, List<R>> results = new LinkedHashMap<>();
        contenders.forEach(c -> results.put(c, new ArrayList<>()));
        for (int s = 0; s < slices; s++) {
            List<C> order = new ArrayList<>(contenders);
            Collections.shuffle(order, shuffle);
            for (C c : order) {
                results.get(c).add(measure.run(c, sliceNanos));
            }
        }
        return results;
    }

    /**
     * Warms every contender up, then runs {@code slices} rounds; in each round every contender
     * other than {@code floor}, in a shuffled order, runs one slice right beside a slice of the
     * floor (which of the two goes first alternates), so that each ratio compares two runs a few
     * hundred milliseconds apart rather than up to a whole round apart on this noisy machine. A pair
     * during which other processes used the CPU is thrown away and run again ({@link QuietGate}).
     *
     * @return every contender's slices, and for each one but the floor the floor slices paired
     *     with them (index i of both lists is one pair); the floor's own list holds all its slices
     */
    static <C, R> Paired<C, R> interleavePaired(List<C> contenders, C floor, int slices, long warmupNanos,
            long sliceNanos, Random shuffle, Measure<C, R> measure) throws Exception {
        for (C c : contenders) {
            measure.run(c, warmupNanos);
        }
        Map<C, List<R>> results = new LinkedHashMap<>();
        Map<C, List<R>> floorOf = new LinkedHashMap<>();
        contenders.forEach(c -> results.put(c, new ArrayList<>()));
        boolean floorFirst = shuffle.nextBoolean();
        for (int s = 0; s < slices; s++) {
            List<C> order = new ArrayList<>(contenders);
            order.remove(floor);
            Collections.shuffle(order, shuffle);
            for (C c : order) {
                R f;
                R mine;
                for (int attempt = 0; ; attempt++) {
                    QuietGate.Sample before = QuietGate.sample();
                    if (floorFirst) {
                        f = measure.run(floor, sliceNanos);
                        mine = measure.run(c, sliceNanos);
                    } else {
                        mine = measure.run(c, sliceNanos);
                        f = measure.run(floor, sliceNanos);
                    }
                    floorFirst = !floorFirst;
                    if (QuietGate.judge(QuietGate.foreignCores(before), attempt)) {
                        break;
                    }
                    Thread.sleep(500); // let the neighbour's burst pass
                }
                results.get(c).add(mine);
                results.get(floor).add(f);
                floorOf.computeIfAbsent(c, k -> new ArrayList<>()).add(f);
            }
        }
        floorOf.put(floor, results.get(floor));
        return new Paired<>(results, floorOf);
    }

    /**
     * Slices measured in pairs with the floor's.
     *
     * @param results each contender's slices
     * @param floorOf for each contender, the floor slices run beside its slices, in the same order
     */
    record Paired<C, R>(Map<C, List<R>> results, Map<C, List<R>> floorOf) {}

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

    private static final Duration MAX_WAIT = Duration.ofSeconds(30);

    private record WaitThreadResult(long[] waits, long failures, Exception firstError) {}

    /**
     * Runs {@code threadCount} threads that loop acquire (waiting up to 30 s), hold, release on
     * one shared lock name until the slice ends. Only acquisitions that returned inside the slice
     * count; a waiter still blocked at the end finishes its cycle uncounted. Mutual exclusion
     * inside this JVM is checked on every hold.
     *
     * @param holdNanos how long each hold parks; 0 releases at once
     */
    WaitSliceResult runWaiting(WaitingContender contender, int threadCount, String lockName, long holdNanos,
            long durationNanos) throws Exception {
        CountDownLatch ready = new CountDownLatch(threadCount);
        CountDownLatch go = new CountDownLatch(1);
        long[] start = new long[1];
        AtomicInteger inside = new AtomicInteger();
        AtomicLong overlaps = new AtomicLong();
        List<Future<WaitThreadResult>> futures = new ArrayList<>();
        for (int i = 0; i < threadCount; i++) {
            futures.add(threads.submit(() -> {
                ready.countDown();
                go.await();
                return waitLoop(contender, lockName, holdNanos, start[0] + durationNanos, inside, overlaps);
            }));
        }
        ready.await();
        start[0] = System.nanoTime();
        go.countDown();

        long[] perThread = new long[threadCount];
        List<long[]> all = new ArrayList<>();
        long failures = 0;
        Exception firstError = null;
        for (int i = 0; i < threadCount; i++) {
            WaitThreadResult r = futures.get(i).get();
            perThread[i] = r.waits().length;
            all.add(r.waits());
            failures += r.failures();
            firstError = firstError != null ? firstError : r.firstError();
        }
        if (firstError != null) {
            System.err.println(contender.id() + ": a blocking cycle threw " + firstError);
        }
        long[] merged = all.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        double mean = Arrays.stream(merged).average().orElse(Double.NaN);
        return new WaitSliceResult(merged.length, failures, overlaps.get(), durationNanos, perThread, mean,
                Stats.percentile(merged, 50), Stats.percentile(merged, 99));
    }

    private static WaitThreadResult waitLoop(WaitingContender contender, String lockName, long holdNanos, long deadline,
            AtomicInteger inside, AtomicLong overlaps) {
        LongList waits = new LongList(1024);
        long failures = 0;
        Exception firstError = null;
        while (true) {
            long t0 = System.nanoTime();
            if (t0 - deadline >= 0) {
                break;
            }
            WaitingContender.Held held;
            try {
                held = contender.acquire(lockName, MAX_WAIT);
            } catch (Exception e) {
                failures++;
                firstError = firstError != null ? firstError : e;
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // no hot loop on a failing store
                continue;
            }
            long t1 = System.nanoTime();
            if (inside.incrementAndGet() != 1) {
                overlaps.incrementAndGet();
            }
            if (holdNanos > 0) {
                LockSupport.parkNanos(holdNanos);
            }
            inside.decrementAndGet(); // before the release: after it, another thread may hold the lock
            try {
                held.release();
            } catch (Exception e) {
                failures++;
                firstError = firstError != null ? firstError : e;
            }
            if (t1 - deadline < 0) {
                waits.add(t1 - t0);
            }
        }
        return new WaitThreadResult(waits.toArray(), failures, firstError);
    }

    @Override
    public void close() {
        threads.shutdownNow();
    }
}
