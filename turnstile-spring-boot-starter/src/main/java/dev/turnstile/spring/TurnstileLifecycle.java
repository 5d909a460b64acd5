package dev.turnstile.spring;

import dev.turnstile.Lease;
import dev.turnstile.Turnstile;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Releases held leases on a graceful shutdown. Stops after the schedulers and the web server
 * (a lower phase stops later), so nothing starts a new locked run behind it: from {@link #stop()}
 * on, locked calls are skipped; calls already running get {@code turnstile.shutdown.await-running}
 * to return (releasing their own leases, honouring {@code lockAtLeastFor}); then every lease this
 * instance still holds is released.
 */
public final class TurnstileLifecycle implements SmartLifecycle {
    /** After the web server's graceful shutdown and the task schedulers. */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

    private static final Logger log = LoggerFactory.getLogger(TurnstileLifecycle.class);

    private final Turnstile turnstile;
    private final Duration awaitRunning;
    private final Object monitor = new Object();
    private boolean running;
    private boolean stopped;
    private int inFlight;

    TurnstileLifecycle(Turnstile turnstile, Duration awaitRunning) {
        this.turnstile = turnstile;
        this.awaitRunning = awaitRunning;
    }

    /**
     * Admits a locked call unless the context has stopped (calls made while it starts, from an
     * init method, are admitted); pair with {@link #exit()}.
     */
    boolean enter() {
        synchronized (monitor) {
            if (stopped) {
                return false;
            }
            inFlight++;
            return true;
        }
    }

    void exit() {
        synchronized (monitor) {
            inFlight--;
            monitor.notifyAll();
        }
    }

    @Override
    public void start() {
        synchronized (monitor) {
            running = true;
            stopped = false;
        }
    }

    @Override
    public void stop() {
        long deadline = System.nanoTime() + awaitRunning.toNanos();
        synchronized (monitor) {
            running = false;
            stopped = true;
            try {
                while (inFlight > 0) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        log.warn("{} locked run(s) still running after {}: releasing their leases anyway", inFlight, awaitRunning);
                        break;
                    }
                    monitor.wait(Math.max(1, left / 1_000_000));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        List<Lease> held;
        try {
            held = turnstile.heldLeases();
        } catch (IllegalStateException closed) {
            return;
        }
        for (Lease lease : held) {
            try {
                log.info("releasing lock '{}' on shutdown: {}", lease.name(), lease.release());
            } catch (RuntimeException e) {
                log.warn("could not release lock '{}' on shutdown: {}", lease.name(), e.toString());
            }
        }
    }

    @Override
    public boolean isRunning() {
        synchronized (monitor) {
            return running;
        }
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
