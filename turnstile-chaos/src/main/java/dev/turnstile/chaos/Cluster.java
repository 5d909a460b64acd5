package dev.turnstile.chaos;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The worker JVMs of one scenario, their proxies and the harness's own event log. It knows who
 * holds the lock by tailing the workers' event files.
 *
 * <p>A test harness, not published: past 400 lines by the worker processes' start, stop and signals.
 */
final class Cluster implements AutoCloseable {

    /** One worker JVM. */
    static final class WorkerProc {
        final int id;
        final Process process;
        final List<TcpProxy> proxies;
        final Path events;
        final Path clockFile;
        volatile boolean killed;
        volatile boolean paused;
        // tailing state
        private long offset;
        private final StringBuilder partial = new StringBuilder();
        long holdingFence = -1;
        long holdingSince;
        long holdingPlannedMs;
        int acquisitions;

        WorkerProc(int id, Process process, List<TcpProxy> proxies, Path events, Path clockFile) {
            this.id = id;
            this.process = process;
            this.proxies = proxies;
            this.events = events;
            this.clockFile = clockFile;
        }

        long pid() {
            return process.pid();
        }
    }

    private final StoreInstance store;
    private final ChaosConfig config;
    private final Path dir;
    private final String lock;
    private final String resourceId;
    private final boolean proxied;
    private final Path faketime;
    private final Path stopFile;
    private final Path longFile;
    private final EventLog harness;
    private final List<WorkerProc> workers = new ArrayList<>();
    private int nextId;
    private volatile long lastFaultAt = Long.MIN_VALUE;
    private long lastAcquiredAt = Long.MIN_VALUE; // guarded by this

    Cluster(StoreInstance store, ChaosConfig config, Path dir, String lock, String resourceId, boolean proxied, Path faketime) {
        this.store = store;
        this.config = config;
        this.dir = dir;
        this.lock = lock;
        this.resourceId = resourceId;
        this.proxied = proxied;
        this.faketime = faketime;
        this.stopFile = dir.resolve("STOP");
        this.longFile = dir.resolve("LONG");
        this.harness = new EventLog(dir.resolve("harness.jsonl"), -1);
    }

    StoreInstance store() {
        return store;
    }

    ChaosConfig config() {
        return config;
    }

    /** Records a harness event now. */
    Event record(int worker, String type, String detail) {
        Event e = harness.add(worker, type, -1, null, detail);
        if (!type.equals(Event.STOP) && !type.equals(Event.DESTROY)) {
            lastFaultAt = e.t();
        }
        return e;
    }

    /** When the harness last recorded a fault event (monotonic ns), or {@link Long#MIN_VALUE}. */
    long lastFaultEnd() {
        return lastFaultAt;
    }

    /** Waits until a worker acquires after monotonic time {@code t}; gives up quietly after {@code timeout}. */
    void awaitAcquiredSince(long t, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            refresh();
            synchronized (this) {
                if (lastAcquiredAt > t) {
                    return;
                }
            }
            Harness.sleep(20);
        }
    }

    List<WorkerProc> workers() {
        return List.copyOf(workers);
    }

    /** Starts a worker JVM (with its own proxies in front of every store endpoint, if proxied). */
    WorkerProc spawn() {
        int id = nextId++;
        List<TcpProxy> proxies = new ArrayList<>();
        List<String> via = new ArrayList<>();
        for (String ep : store.endpoints()) {
            if (proxied) {
                TcpProxy p = new TcpProxy(ep.substring(0, ep.lastIndexOf(':')), Integer.parseInt(ep.substring(ep.lastIndexOf(':') + 1)));
                proxies.add(p);
                via.add(p.hostPort());
            } else {
                via.add(ep);
            }
        }
        Path events = dir.resolve(String.format("worker-%02d.jsonl", id));
        Path clock = dir.resolve(String.format("clock-%02d.txt", id));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx192m", "-Xss512k",
                "-XX:-UsePerfData", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-cp", workerClassPath(config.workDir()), Worker.class.getName(),
                "id=" + id, "store=" + store.url(via), "lock=" + lock, "resource=" + config.resourceUrl(),
                "resourceId=" + resourceId, "events=" + events, "stopFile=" + stopFile,
                "ttlMs=" + config.ttl().toMillis(), "holdMs=" + config.hold().toMillis(),
                "thinkMs=" + config.think().toMillis(), "waitMs=" + Math.max(10_000, 5 * config.ttl().toMillis()),
                "shortHoldMs=" + config.shortHold().toMillis(), "longShare=" + config.longHoldShare(), "longFile=" + longFile));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(dir.resolve(String.format("worker-%02d.log", id)).toFile());
        if (faketime != null) {
            try {
                Files.writeString(clock, "+0\n");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            Map<String, String> env = pb.environment();
            env.put("LD_PRELOAD", faketime.toString());
            env.put("FAKETIME_TIMESTAMP_FILE", clock.toString());
            env.put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
            // Without this, libfaketime 0.9.10 "fixes" the JVM's monotonic timed waits, and class
            // loading and every timed wait crawl: a worker took 5-7 s instead of 0.8 s to its first lock.
            env.put("FAKETIME_FORCE_MONOTONIC_FIX", "0");
            env.put("FAKETIME_CACHE_DURATION", "1");
        }
        Process process;
        try {
            process = Harness.startInOwnSession(pb);
        } catch (IOException e) {
            proxies.forEach(TcpProxy::close);
            throw new UncheckedIOException(e);
        }
        WorkerProc w = new WorkerProc(id, process, proxies, events, clock);
        workers.add(w);
        harness.add(id, Event.SPAWN, -1, null, "pid " + process.pid());
        return w;
    }

    private static String workerClassPath;

    /**
     * The class path for worker JVMs: this JVM's, with Turnstile's own jars copied once into the
     * work directory. Other builds on the machine reinstall those snapshot jars in the local
     * repository while runs go on, and a jar rewritten under a running worker makes its next class
     * load fail (NoClassDefFoundError); copies keep every worker of this harness on the same bytes.
     */
    static synchronized String workerClassPath(Path workDir) {
        if (workerClassPath != null) {
            return workerClassPath;
        }
        Path lib = workDir.toAbsolutePath().resolve("lib-" + ProcessHandle.current().pid());
        List<String> entries = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            Path p = Path.of(entry);
            String name = p.getFileName() == null ? "" : p.getFileName().toString();
            if (name.startsWith("turnstile-") && name.endsWith(".jar") && Files.isRegularFile(p)) {
                try {
                    Files.createDirectories(lib);
                    Path copy = lib.resolve(name);
                    Files.copy(p, copy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                    entries.add(copy.toString());
                    continue;
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot copy " + p + " for the workers", e);
                }
            }
            entries.add(entry);
        }
        workerClassPath = String.join(java.io.File.pathSeparator, entries);
        return workerClassPath;
    }

    /** Reads what the workers wrote since the last look and updates who holds what. */
    synchronized void refresh() {
        for (WorkerProc w : workers) {
            if (!Files.exists(w.events)) {
                continue;
            }
            try (RandomAccessFile f = new RandomAccessFile(w.events.toFile(), "r")) {
                long len = f.length();
                if (len <= w.offset) {
                    continue;
                }
                byte[] buf = new byte[(int) (len - w.offset)];
                f.seek(w.offset);
                f.readFully(buf);
                w.offset = len;
                w.partial.append(new String(buf, StandardCharsets.UTF_8));
            } catch (IOException e) {
                continue;
            }
            int nl;
            while ((nl = w.partial.indexOf("\n")) >= 0) {
                String line = w.partial.substring(0, nl);
                w.partial.delete(0, nl + 1);
                Event e;
                try {
                    e = Event.fromJson(line);
                } catch (RuntimeException bad) {
                    continue;
                }
                switch (e.type()) {
                    case Event.ACQUIRED -> {
                        w.holdingFence = e.fence();
                        w.holdingSince = e.t();
                        w.holdingPlannedMs = plannedHold(e.detail());
                        w.acquisitions++;
                        lastAcquiredAt = Math.max(lastAcquiredAt, e.t());
                    }
                    case Event.RELEASE_CALL, Event.LOST -> {
                        if (e.fence() == w.holdingFence) {
                            w.holdingFence = -1;
                        }
                    }
                    default -> { }
                }
            }
        }
    }

    /** Acquisitions seen so far. */
    synchronized int acquisitions() {
        refresh();
        return workers.stream().mapToInt(w -> w.acquisitions).sum();
    }

    /** Waits until the workers have acquired {@code n} times in all. */
    void awaitAcquisitions(int n, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (acquisitions() < n) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the workers acquired only " + acquisitions() + " times in " + timeout.toSeconds()
                        + " s (wanted " + n + "); see the worker logs in " + dir);
            }
            if (workers.stream().noneMatch(w -> w.process.isAlive())) {
                throw new IllegalStateException("every worker exited before acquiring; see the worker logs in " + dir);
            }
            Harness.sleep(20);
        }
    }

    /** The hold a worker planned ({@code hold N ms} in its acquired event); long if it did not say. */
    private long plannedHold(String detail) {
        if (detail != null && detail.startsWith("hold ")) {
            try {
                return Long.parseLong(detail.substring(5, detail.indexOf(' ', 5)));
            } catch (RuntimeException e) {
                return config.hold().toMillis();
            }
        }
        return config.hold().toMillis();
    }

    /**
     * Finds a live, running worker in a long hold (one of {@link ChaosConfig#hold()}) that began at
     * most a third of it ago, so that most of the hold is ahead of it: the holder a fault aims at.
     *
     * @return the holder, or {@code null} if none turned up within {@code timeout}
     */
    WorkerProc awaitFreshHolder(Duration timeout) {
        return awaitHolder(config.hold().dividedBy(3), config.hold().toMillis(), timeout);
    }

    /**
     * Finds a live, running worker in a long hold, however long it has held.
     *
     * @return the holder, or {@code null} if none turned up within {@code timeout}
     */
    WorkerProc awaitLongHolder(Duration timeout) {
        return awaitHolder(Duration.ofDays(1), config.hold().toMillis(), timeout);
    }

    /**
     * Finds a live, running worker that holds the lock and acquired it at most {@code maxAge} ago.
     *
     * @return the holder, or {@code null} if none turned up within {@code timeout}
     */
    WorkerProc awaitHolder(Duration maxAge, Duration timeout) {
        return awaitHolder(maxAge, 0, timeout);
    }

    /** The live worker (neither killed nor paused) number {@code pick} modulo their count; {@code null} if there is none. */
    synchronized WorkerProc anyWorker(int pick) {
        List<WorkerProc> live = workers.stream().filter(w -> !w.killed && !w.paused && w.process.isAlive()).toList();
        return live.isEmpty() ? null : live.get(Math.floorMod(pick, live.size()));
    }

    private WorkerProc awaitHolder(Duration maxAge, long minPlannedMs, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        if (minPlannedMs > 0 && config.shortHold().toMillis() > 0) {
            try {
                Files.writeString(longFile, "hold long\n"); // the next worker to acquire deletes it and holds long
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        while (System.nanoTime() < deadline) {
            refresh();
            long now = System.nanoTime();
            synchronized (this) {
                for (WorkerProc w : workers) {
                    if (!w.killed && !w.paused && w.process.isAlive() && w.holdingFence >= 0 && now - w.holdingSince <= maxAge.toNanos()
                            && w.holdingPlannedMs >= minPlannedMs) {
                        return w;
                    }
                }
            }
            Harness.sleep(3);
        }
        return null;
    }

    /** SIGKILLs a worker; the kill is recorded first, so the holder is dead by the recorded time plus a few ms. */
    void kill(WorkerProc w) {
        kill(w, false);
    }

    /** SIGKILLs a worker; {@code bystander}: chosen at random, not as the holder (recorded with the kill). */
    void kill(WorkerProc w, boolean bystander) {
        record(w.id, Event.KILL, "pid " + w.pid() + (bystander ? ", " + BYSTANDER : ""));
        w.killed = true;
        w.process.destroyForcibly();
        try {
            w.process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** SIGSTOPs a worker. */
    void pause(WorkerProc w) {
        pause(w, false);
    }

    /**
     * SIGSTOPs a worker.
     *
     * @param bystander the harness chose it at random, not as the holder: a pause that finds it
     *     holding nothing is not a missed fault (see {@link PausedHolderChecker})
     */
    void pause(WorkerProc w, boolean bystander) {
        w.paused = true;
        Harness.signal(w.pid(), "STOP");
        record(w.id, Event.PAUSE, "pid " + w.pid() + (bystander ? ", " + BYSTANDER : ""));
    }

    /** Marks a harness event aimed at a worker chosen at random rather than at the holder. */
    static final String BYSTANDER = "bystander";

    /** SIGCONTs a worker; recorded before the signal, so loss latencies are not understated. */
    void resume(WorkerProc w) {
        record(w.id, Event.RESUME, "pid " + w.pid());
        Harness.signal(w.pid(), "CONT");
        w.paused = false;
    }

    /** Every proxy of every worker. */
    List<TcpProxy> allProxies() {
        return workers.stream().flatMap(w -> w.proxies.stream()).toList();
    }

    /**
     * Ends the run: records a stop, drops the stop file, waits for the workers to finish their round
     * and exit, and kills (recording it) any that do not within {@code grace}.
     */
    void stop(Duration grace) {
        for (WorkerProc w : workers) {
            if (w.paused) {
                resume(w);
            }
        }
        allProxies().forEach(TcpProxy::heal);
        record(-1, Event.STOP, null);
        try {
            Files.writeString(stopFile, "stop\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        long deadline = System.nanoTime() + grace.toNanos();
        for (WorkerProc w : workers) {
            try {
                w.process.waitFor(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (w.process.isAlive()) {
                record(w.id, Event.DESTROY, "did not exit within " + grace.toSeconds() + " s of the stop");
                w.process.destroyForcibly();
            }
        }
    }

    @Override
    public void close() {
        for (WorkerProc w : workers) {
            if (w.process.isAlive()) {
                if (w.paused) {
                    Harness.signal(w.pid(), "CONT");
                }
                w.process.destroyForcibly();
            }
            w.proxies.forEach(TcpProxy::close);
        }
        harness.close();
    }
}
