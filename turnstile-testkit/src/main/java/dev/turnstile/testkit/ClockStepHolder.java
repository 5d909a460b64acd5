package dev.turnstile.testkit;

import dev.turnstile.Lease;
import dev.turnstile.LeaseLostException;
import dev.turnstile.LockOptions;
import dev.turnstile.ReleaseOutcome;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A lock holder in a child JVM whose wall clock can be stepped while it holds the lock, for tests
 * that prove a store decides lease ends and {@code lockAtLeastFor} by its own clock, never by the
 * client's. The child runs under libfaketime (the Debian package {@code faketime}), preloaded into
 * that JVM only: it reads its wall-clock offset from a file that {@link #stepClock} rewrites, while
 * {@code FAKETIME_DONT_FAKE_MONOTONIC=1} leaves {@code System.nanoTime()} true (the lease's own
 * deadline and the JVM's timed waits need it) and {@code FAKETIME_FORCE_MONOTONIC_FIX=0} keeps
 * libfaketime 0.9.10 from slowing the JVM's timed waits to a crawl.
 *
 * <p>The child opens the store by URL, so any store module's tests can use it with a server the
 * test JVM runs (mongo-java-server, Curator's TestingServer, an H2 TCP server) or a real one. It
 * speaks a line protocol on stdin/stdout: {@code acquire} (answers {@code acquired <fence>}),
 * {@code clock} ({@code clock <epoch ms>}, its wall clock), {@code extend} ({@code extend done}, or
 * {@code extend refused} when the store no longer holds the lease for it),
 * {@code release} ({@code released <ReleaseOutcome>}, then it exits). The lease is kept alive every
 * 200 ms, so renewals also run on the stepped clock.
 */
public final class ClockStepHolder implements AutoCloseable {
    private static final List<String> LIBRARIES = List.of(
            "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
            "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
            "/usr/lib/faketime/libfaketime.so.1",
            "/usr/local/lib/faketime/libfaketime.so.1");
    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(20);

    private final Process process;
    private final Writer commands;
    private final BlockingQueue<String> answers = new ArrayBlockingQueue<>(64);
    private final Path clockFile;
    private final Path log;

    private ClockStepHolder(Process process, Path clockFile, Path log) {
        this.process = process;
        this.clockFile = clockFile;
        this.log = log;
        this.commands = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = out.readLine()) != null; ) {
                    if (line.startsWith("ts> ")) {
                        answers.put(line.substring(4));
                    }
                }
            } catch (IOException | InterruptedException e) {
                // the child is gone; a waiting command reports it
            }
            answers.offer("exited"); // a waiting command fails at once, not after its timeout
        }, "clock-step-holder-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts a holder JVM; it opens the store but does not acquire until {@link #acquire()}.
     *
     * @param url the store URL the child opens (the child's class path is this JVM's)
     * @param name the lock name
     * @param ttl the lease's maximum hold
     * @param lockAtLeastFor the lease's {@code lockAtLeastFor}
     * @param dir a directory for the clock file and the child's stderr log
     * @return the running holder
     * @throws IllegalStateException if libfaketime is not installed (never skipped silently:
     *     {@code apt-get install faketime}, or scripts/services.sh)
     * @throws IOException if the JVM cannot be started
     */
    public static ClockStepHolder start(String url, String name, Duration ttl, Duration lockAtLeastFor, Path dir)
            throws IOException {
        Path lib = LIBRARIES.stream().map(Path::of).filter(Files::isReadable).findFirst()
                .orElseThrow(() -> new IllegalStateException("the client-clock-step tests need libfaketime, and none of "
                        + LIBRARIES + " exists: install it with 'apt-get install faketime' (scripts/services.sh does)"));
        Files.createDirectories(dir);
        Path clock = Files.createTempFile(dir, "clock-", ".txt");
        Files.writeString(clock, "+0\n");
        Path log = Files.createTempFile(dir, "holder-", ".log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
                ClockStepHolder.class.getName(), url, name, Long.toString(ttl.toMillis()), Long.toString(lockAtLeastFor.toMillis()))
                .redirectError(log.toFile());
        pb.environment().put("LD_PRELOAD", lib.toString());
        pb.environment().put("FAKETIME_TIMESTAMP_FILE", clock.toString());
        pb.environment().put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
        pb.environment().put("FAKETIME_FORCE_MONOTONIC_FIX", "0");
        pb.environment().put("FAKETIME_CACHE_DURATION", "1");
        ClockStepHolder h = new ClockStepHolder(pb.start(), clock, log);
        h.ask("ready", "ready");
        return h;
    }

    /**
     * Acquires the lock in the child (waiting up to 10 s for it).
     *
     * @return the fence
     * @throws IllegalStateException if the child did not get the lock or failed
     */
    public long acquire() {
        return Long.parseLong(ask("acquire", "acquired"));
    }

    /**
     * Steps the child's wall clock to {@code offset} from the true time and waits until the child
     * sees it (libfaketime rereads the file about once a second).
     *
     * @param offset libfaketime's syntax: {@code +1h}, {@code -1h}, {@code +0}
     * @param expected the offset in milliseconds that the child's clock must show (within 5 s)
     * @throws IllegalStateException if the child's clock does not move within 5 s
     * @throws IOException if the clock file cannot be written
     */
    public void stepClock(String offset, long expected) throws IOException {
        Files.writeString(clockFile, offset + "\n");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            long skew = Long.parseLong(ask("clock", "clock")) - System.currentTimeMillis();
            if (Math.abs(skew - expected) < 5_000) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the child's clock is " + skew + " ms off, not " + expected + " ms, 5 s after "
                        + "writing '" + offset + "' to " + clockFile);
            }
            sleep(100);
        }
    }

    /**
     * Extends the lease in the child to its TTL from now (one store call on the stepped clock).
     *
     * @return {@code true} if extended, {@code false} if the store refused (the child's lease is lost)
     */
    public boolean extend() {
        return !ask("extend", "extend").equals("refused");
    }

    /**
     * Releases the lease in the child (with the {@code lockAtLeastFor} it was acquired with).
     *
     * @return what the child's {@code Lease.release()} reported
     */
    public ReleaseOutcome release() {
        return ReleaseOutcome.valueOf(ask("release", "released"));
    }

    private String ask(String command, String answer) {
        try {
            if (!command.equals("ready")) {
                commands.write(command + "\n");
                commands.flush();
            }
            String line = answers.poll(ANSWER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            if (line == null || !line.startsWith(answer)) {
                throw new IllegalStateException("the clock-step holder answered '" + line + "' to '" + command + "', not '"
                        + answer + " …'; its log:\n" + childLog());
            }
            return line.substring(answer.length()).trim();
        } catch (IOException e) {
            throw new IllegalStateException("the clock-step holder is gone (" + e + "); its log:\n" + childLog(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private String childLog() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return e.toString();
        }
    }

    /** Kills the child if it is still running, and waits up to 10 s for it to go (the interrupt flag is kept). */
    @Override
    public void close() {
        try {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The first moment ({@code System.nanoTime()}) at which {@code observer} could take the lock,
     * trying every 20 ms until {@code untilNanos}; the lock is given back at once.
     *
     * @param observer a store on the same server, in this JVM (whose clock is true)
     * @param name the lock name
     * @param untilNanos when to give up
     * @return the moment, or empty if the lock stayed taken
     */
    public static Optional<Long> firstFree(LockStore observer, String name, long untilNanos) {
        while (true) {
            long t = System.nanoTime();
            String token = "observer-" + Long.toHexString(t);
            if (observer.tryAcquire(new dev.turnstile.spi.AcquireRequest(name, "observer", token, Duration.ofSeconds(5))).isPresent()) {
                observer.release(name, token, Duration.ZERO);
                return Optional.of(t);
            }
            if (t - untilNanos > 0) {
                return Optional.empty();
            }
            sleep(20);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /**
     * The child: see the class comment for its protocol. Answers start with {@code ts> } so that
     * JVM or driver chatter on stdout is not taken for one.
     *
     * @param args store URL, lock name, ttl ms, lockAtLeastFor ms
     * @throws Exception on any failure (the parent sees the child's stderr)
     */
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err); // drivers that print go to the log, not into the protocol
        String url = args[0];
        String name = args[1];
        LockOptions options = LockOptions.builder().lockAtMostFor(Duration.ofMillis(Long.parseLong(args[2])))
                .lockAtLeastFor(Duration.ofMillis(Long.parseLong(args[3]))).keepAlive(Duration.ofMillis(200)).build();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (LockStore store = LockStores.open(url); Turnstile turnstile = Turnstile.builder(store).build()) {
            store.heldLocks(); // connect before the parent starts timing
            out.println("ts> ready");
            Lease lease = null;
            for (String line; (line = in.readLine()) != null; ) {
                switch (line) {
                    case "acquire" -> {
                        lease = turnstile.acquire(name, options, Duration.ofSeconds(10))
                                .orElseThrow(() -> new IllegalStateException("lock '" + name + "' not obtained within 10 s"));
                        out.println("ts> acquired " + lease.fence());
                    }
                    case "clock" -> out.println("ts> clock " + System.currentTimeMillis());
                    case "extend" -> {
                        try {
                            acquired(lease).extend(options.lockAtMostFor());
                            out.println("ts> extend done");
                        } catch (LeaseLostException e) {
                            out.println("ts> extend refused");
                        }
                    }
                    case "release" -> {
                        out.println("ts> released " + acquired(lease).release());
                        return;
                    }
                    default -> throw new IllegalArgumentException("unknown command '" + line + "'");
                }
            }
        }
    }

    /** The lease of the child's "acquire": a parent that sends "extend" or "release" first is wrong. */
    private static Lease acquired(@Nullable Lease lease) {
        if (lease == null) {
            throw new IllegalStateException("no lease: the parent must send 'acquire' first");
        }
        return lease;
    }
}
