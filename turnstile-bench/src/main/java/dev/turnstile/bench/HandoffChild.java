package dev.turnstile.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * One competing process of {@link HandoffBench}: loops acquire (waiting), hold 1 ms, release on
 * one shared lock name until a common deadline, and logs each hold's start and end on
 * {@link System#nanoTime()}, which on Linux is CLOCK_MONOTONIC and so comparable across the
 * processes of one host.
 *
 * <p>Protocol with the parent: print {@code READY} once warmed up, then read
 * {@code GO <startNanos> <endNanos>} from standard input (the loop runs from GO and records from
 * startNanos). The log file has {@code pid}, {@code cpu_nanos} and {@code wall_nanos}
 * lines (CPU used and wall time between the end of the warm-up and the end of the loop), then one
 * {@code <acquiredNanos> <releasingNanos>} line per hold.
 */
public final class HandoffChild {
    private static final Duration MAX_WAIT = Duration.ofSeconds(30);
    private static final int WARMUP_CYCLES = 200;

    private HandoffChild() {}

    /**
     * Runs one child.
     *
     * @param args the contender kind (see {@link HandoffBench#open}), the lock name, the log file
     * @throws Exception on any failure; the parent reports the exit code
     */
    public static void main(String[] args) throws Exception {
        Logging.quiet();
        if (args.length != 3) {
            throw new IllegalArgumentException("usage: HandoffChild <kind> <lockName> <logFile>");
        }
        String lockName = args[1];
        Path logFile = Path.of(args[2]);
        long pid = ProcessHandle.current().pid();
        try (WaitingContender contender = HandoffBench.open(args[0])) {
            // Warm the code paths on a private name, so the JIT is not part of the first hand-offs.
            String warmName = lockName + "-warm-" + pid;
            for (int i = 0; i < WARMUP_CYCLES; i++) {
                contender.acquire(warmName, MAX_WAIT).release();
            }
            System.out.println("READY");
            System.out.flush();
            String go = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            String[] times = go == null ? new String[0] : go.trim().split(" ");
            if (times.length != 3 || !times[0].equals("GO")) {
                throw new IllegalStateException("expected 'GO <startNanos> <endNanos>' from the parent, got " + go);
            }
            long start = Long.parseLong(times[1]);
            long end = Long.parseLong(times[2]);

            int threads = BenchConfig.handoffThreads();
            LongList[] acquired = new LongList[threads];
            LongList[] releasing = new LongList[threads];
            Thread[] loops = new Thread[threads];
            Throwable[] failed = new Throwable[1];
            // CPU and wall time count from the end of the warm-up, by the process as a whole.
            long wait = start - System.nanoTime();
            for (int t = 0; t < threads; t++) {
                LongList a = acquired[t] = new LongList(1 << 12);
                LongList r = releasing[t] = new LongList(1 << 12);
                loops[t] = new Thread(() -> {
                    try {
                        loop(contender, lockName, start, end, a, r);
                    } catch (Throwable e) {
                        synchronized (failed) {
                            failed[0] = failed[0] == null ? e : failed[0];
                        }
                    }
                }, "handoff-waiter-" + t);
                loops[t].start();
            }
            if (wait > 0) {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            }
            long cpu0 = cpuNanos();
            long wall0 = System.nanoTime();
            for (Thread loop : loops) {
                loop.join();
            }
            if (failed[0] != null) {
                throw new IllegalStateException("a waiting thread failed", failed[0]);
            }
            long wall = System.nanoTime() - wall0;
            long cpu = cpuNanos() - cpu0;
            write(logFile, pid, cpu, wall, acquired, releasing);
        }
    }

    /** One waiter's loop: acquire (waiting), hold 1 ms, release, until {@code end}; records holds from {@code start}. */
    private static void loop(WaitingContender contender, String lockName, long start, long end, LongList acquired,
            LongList releasing) throws Exception {
        while (System.nanoTime() - end < 0) {
            WaitingContender.Held held = contender.acquire(lockName, MAX_WAIT);
            long a = System.nanoTime();
            Thread.sleep(1);
            long r = System.nanoTime();
            held.release();
            if (a - start >= 0) {
                acquired.add(a);
                releasing.add(r);
            }
            // No pause here: the releasing waiter competes again at once, which is what exposes starvation.
        }
    }

    private static long cpuNanos() {
        return ProcessHandle.current().info().totalCpuDuration().map(Duration::toNanos).orElse(-1L);
    }

    private static void write(Path file, long pid, long cpu, long wall, LongList[] acquired, LongList[] releasing)
            throws Exception {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8))) {
            w.println("pid " + pid);
            w.println("cpu_nanos " + cpu);
            w.println("wall_nanos " + wall);
            for (int t = 0; t < acquired.length; t++) {
                long[] a = acquired[t].toArray();
                long[] r = releasing[t].toArray();
                for (int i = 0; i < a.length; i++) {
                    w.println(a[i] + " " + r[i] + " " + t);
                }
            }
        }
    }
}
