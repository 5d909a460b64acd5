package dev.turnstile.testkit;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A contender in its own JVM: acquires one lock name {@code iterations} times and, while holding
 * it, proves exclusion through the file system. It creates a marker file with create-new semantics
 * (a second holder would fail to), bumps an unguarded counter file (a second holder would lose an
 * update), and appends its fence to a log (the order must be strictly increasing).
 *
 * <p>Exit codes: 0 done, 3 overlap seen, 4 lock not obtained within the wait, 1 other error.
 */
public final class ContenderProcess {
    private ContenderProcess() {}

    /**
     * Runs one contender.
     *
     * @param args store URL, lock name, iterations, work directory
     * @throws Exception on store or file errors (exit code 1)
     */
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String name = args[1];
        int iterations = Integer.parseInt(args[2]);
        Path dir = Path.of(args[3]);
        LockOptions options = LockOptions.builder().lockAtMostFor(Duration.ofSeconds(30)).build();
        try (LockStore store = LockStores.open(url);
                Turnstile turnstile = Turnstile.builder(store).build()) {
            for (int i = 0; i < iterations; i++) {
                Optional<Lease> lease = turnstile.acquire(name, options, Duration.ofMinutes(2));
                if (lease.isEmpty()) {
                    System.exit(4);
                }
                try (Lease held = lease.get()) {
                    if (!criticalSection(dir, held.fence())) {
                        System.exit(3);
                    }
                }
            }
        }
        System.exit(0);
    }

    private static boolean criticalSection(Path dir, long fence) throws IOException {
        Path marker = dir.resolve("inside");
        try {
            Files.createFile(marker);
        } catch (FileAlreadyExistsException e) {
            System.err.println("overlap: marker already present at fence " + fence);
            return false;
        }
        Path counter = dir.resolve("counter");
        long value = Files.exists(counter) ? Long.parseLong(Files.readString(counter).trim()) : 0;
        Thread.onSpinWait();
        Files.writeString(counter, Long.toString(value + 1));
        Files.writeString(dir.resolve("fences"), fence + "\n", StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        Files.delete(marker);
        return true;
    }

    /**
     * Starts {@code processes} contender JVMs on one lock and waits for them.
     *
     * @param url the store URL each JVM opens
     * @param name the lock name
     * @param processes how many JVMs
     * @param iterations acquisitions per JVM
     * @param dir the shared work directory (empty)
     * @param timeout how long to wait for all of them
     * @return each JVM's exit code, in start order
     * @throws Exception if a JVM cannot be started or does not finish in time
     */
    public static List<Integer> runAll(String url, String name, int processes, int iterations, Path dir,
            Duration timeout) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> started = new ArrayList<>();
        try {
            for (int p = 0; p < processes; p++) {
                ProcessBuilder pb = new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                        "-cp", System.getProperty("java.class.path"), ContenderProcess.class.getName(),
                        url, name, Integer.toString(iterations), dir.toString());
                pb.redirectErrorStream(true);
                pb.redirectOutput(dir.resolve("contender-" + p + ".log").toFile());
                started.add(pb.start());
            }
            List<Integer> codes = new ArrayList<>();
            long deadline = System.nanoTime() + timeout.toNanos();
            for (Process process : started) {
                long left = Math.max(1, deadline - System.nanoTime());
                if (!process.waitFor(left, TimeUnit.NANOSECONDS)) {
                    throw new IllegalStateException("contender did not finish within " + timeout + "; logs in " + dir);
                }
                codes.add(process.exitValue());
            }
            return codes;
        } finally {
            started.forEach(Process::destroyForcibly);
        }
    }

    /**
     * Reads the logs the contenders wrote, for a failure message.
     *
     * @param dir the work directory
     * @return the logs joined
     */
    public static String logs(Path dir) {
        StringBuilder b = new StringBuilder();
        File[] files = dir.toFile().listFiles((d, n) -> n.endsWith(".log"));
        if (files != null) {
            for (File f : files) {
                try {
                    b.append("--- ").append(f.getName()).append('\n').append(Files.readString(f.toPath()));
                } catch (IOException e) {
                    b.append(e);
                }
            }
        }
        return b.toString();
    }
}
