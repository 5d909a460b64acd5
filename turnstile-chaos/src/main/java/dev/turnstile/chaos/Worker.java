package dev.turnstile.chaos;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.ReleaseOutcome;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A worker JVM: contends for one lock until told to stop, and records everything it does in its
 * own event file. Each round: acquire (TTL, keep-alive, a loss callback that records the loss),
 * a fenced write to the resource, a hold, a second fenced write late in the hold (the one that
 * catches a holder that was paused), release, a short random think time.
 *
 * <p>Arguments are {@code key=value}: {@code id}, {@code store}, {@code lock}, {@code resource},
 * {@code resourceId}, {@code events}, {@code stopFile}, {@code ttlMs}, {@code holdMs},
 * {@code waitMs}, {@code thinkMs}, and optionally {@code shortHoldMs} and {@code longShare}: then only
 * that share of holds last {@code holdMs}, the others a random 0..{@code shortHoldMs}, except that
 * the worker that deletes the file {@code longFile} (the harness drops it when it wants a holder to
 * aim a fault at) holds long. The planned hold is recorded with each acquisition ({@code hold N ms}),
 * so the harness can aim a fault at a long hold. It stops when {@code stopFile} appears: at once if it is
 * waiting for the lock, after its current round if it holds it.
 */
public final class Worker {
    private final Map<String, String> args;
    private final int id;
    private final EventLog log;
    private final Object interruptLock = new Object();
    private volatile boolean stopping;
    private boolean inAcquire; // guarded by interruptLock

    private Worker(Map<String, String> args) {
        this.args = args;
        this.id = Integer.parseInt(arg("id"));
        this.log = new EventLog(Path.of(arg("events")), id);
    }

    /**
     * Runs a worker.
     *
     * @param argv {@code key=value} arguments
     */
    public static void main(String[] argv) {
        Map<String, String> args = new HashMap<>();
        for (String a : argv) {
            int eq = a.indexOf('=');
            args.put(a.substring(0, eq), a.substring(eq + 1));
        }
        Worker w = new Worker(args);
        int code = 0;
        try {
            w.run();
        } catch (Throwable t) {
            w.log.add(Event.ERROR, -1, null, "worker failed: " + t);
            t.printStackTrace();
            code = 1;
        }
        w.log.add(Event.EXIT, -1, null, null);
        System.exit(code);
    }

    private String arg(String key) {
        String v = args.get(key);
        if (v == null) {
            throw new IllegalArgumentException("missing argument " + key + "=…");
        }
        return v;
    }

    private long millis(String key) {
        return Long.parseLong(arg(key));
    }

    private void run() throws Exception {
        log.add(Event.START, -1, null, "pid " + ProcessHandle.current().pid());
        Thread main = Thread.currentThread();
        Path stopFile = Path.of(arg("stopFile"));
        Thread watcher = new Thread(() -> {
            while (!Files.exists(stopFile)) {
                sleepQuietly(25);
            }
            stopping = true;
            synchronized (interruptLock) {
                if (inAcquire) {
                    main.interrupt();
                }
            }
        }, "stop-watcher");
        watcher.setDaemon(true);
        watcher.start();

        String lock = arg("lock");
        Duration ttl = Duration.ofMillis(millis("ttlMs"));
        long holdMs = millis("holdMs");
        long thinkMs = millis("thinkMs");
        long shortHoldMs = Long.parseLong(args.getOrDefault("shortHoldMs", "0"));
        double longShare = Double.parseDouble(args.getOrDefault("longShare", "1"));
        Path longFile = args.containsKey("longFile") ? Path.of(args.get("longFile")) : null;
        Duration wait = Duration.ofMillis(millis("waitMs"));
        LockOptions options = LockOptions.builder()
                .lockAtMostFor(ttl)
                .keepAlive(true)
                .onLost(loss -> log.add(Event.LOST, loss.fence(), null, loss.reason()))
                .build();

        LockStore opened = open(arg("store"));
        if (opened == null) {
            return; // stopped before the store could be opened
        }
        try (LockStore store = opened;
                Turnstile turnstile = Turnstile.builder(store).owner("chaos-worker-" + id + ":" + ProcessHandle.current().pid()).build();
                FencedResource resource = new FencedResource(arg("resource"), arg("resourceId"), id)) {
            while (!stopping) {
                Optional<Lease> got;
                synchronized (interruptLock) {
                    inAcquire = true;
                }
                try {
                    got = turnstile.acquire(lock, options, wait);
                } catch (InterruptedException e) {
                    break;
                } catch (RuntimeException e) {
                    if (stopping) {
                        break; // the stop interrupted the acquire (Redlock reports that as a store error)
                    }
                    log.add(Event.ERROR, -1, null, "acquire: " + e);
                    sleepQuietly(100);
                    continue;
                } finally {
                    synchronized (interruptLock) {
                        inAcquire = false;
                        Thread.interrupted();
                    }
                }
                if (got.isEmpty()) {
                    log.add(Event.BUSY, -1, null, null);
                    continue;
                }
                Lease lease = got.get();
                long fence = lease.fence();
                ThreadLocalRandom random = ThreadLocalRandom.current();
                long planned = shortHoldMs <= 0 || random.nextDouble() < longShare || (longFile != null && deleted(longFile))
                        ? holdMs : random.nextLong(shortHoldMs + 1);
                log.add(Event.ACQUIRED, fence, null, "hold " + planned + " ms");
                write(resource, lease, 1);
                hold(planned);
                write(resource, lease, 2);
                log.add(Event.RELEASE_CALL, fence, null, null);
                try {
                    ReleaseOutcome outcome = lease.release();
                    log.add(Event.RELEASE, fence, outcome.name(), null);
                } catch (RuntimeException e) {
                    log.add(Event.RELEASE, fence, Event.FAILED, e.toString());
                }
                sleepQuietly(thinkMs + ThreadLocalRandom.current().nextLong(thinkMs + 1));
            }
        }
    }

    private void write(FencedResource resource, Lease lease, int phase) {
        boolean held = lease.isHeld();
        String detail = "phase " + phase + (held ? "" : ", lease not held");
        try {
            log.add(Event.WRITE, lease.fence(), resource.write(lease.fence(), phase), detail);
        } catch (SQLException e) {
            log.add(Event.WRITE, lease.fence(), Event.FAILED, detail + ": " + e.getMessage());
        }
    }

    /**
     * Opens the store, trying again every 200 ms while it is unreachable (a store restart can
     * coincide with a worker's start, as in the mixed run): an unreachable store is an error to
     * record, not a reason for the worker to die. Returns {@code null} if the run stops first.
     */
    private LockStore open(String url) {
        while (!stopping) {
            try {
                return LockStores.open(url);
            } catch (dev.turnstile.StoreUnavailableException e) {
                log.add(Event.ERROR, -1, null, "open: " + e.getMessage());
                sleepQuietly(200);
            }
        }
        return null;
    }

    /** Deletes a file; true if this call deleted it (so of several workers only one wins it). */
    private static boolean deleted(Path file) {
        try {
            return Files.deleteIfExists(file);
        } catch (java.io.IOException e) {
            return false;
        }
    }

    /** Holds for {@code ms}, or less if the run ends meanwhile. */
    private void hold(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L;
        while (!stopping && System.nanoTime() < end) {
            sleepQuietly(Math.min(20, Math.max(1, (end - System.nanoTime()) / 1_000_000L)));
        }
    }

    /** Sleeps the whole time: a stray interrupt must not cut a hold short. */
    private static void sleepQuietly(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L;
        long left;
        while ((left = end - System.nanoTime()) > 0) {
            try {
                Thread.sleep(left / 1_000_000L, (int) (left % 1_000_000L));
            } catch (InterruptedException e) {
                // the stop watcher's interrupt is for acquire only: keep sleeping
            }
        }
    }
}
