package dev.turnstile.cli;

import dev.turnstile.Lease;
import dev.turnstile.LeaseLoss;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import sun.misc.Signal;

/**
 * Runs the command under the lease, through the {@link Guard}: the guard starts it in a process
 * group of its own and stops that group (SIGTERM, then SIGKILL by the lease's local deadline) when
 * the lease is lost, when this JVM dies, and when it freezes. This side keeps the guard told of the
 * lease's deadline, turns a loss the store reports into an immediate kill, and passes signals on.
 *
 * <p>Signals to turnstile: SIGTERM, SIGINT and SIGHUP go to the command's whole group and then
 * stop it as a lost lease would (SIGKILL after the grace period), before the lock is released;
 * SIGUSR1, SIGUSR2, SIGALRM and SIGWINCH are passed on to the command; SIGPIPE and the other
 * signals that would end the JVM are ignored, so that turnstile never dies and leaves the command
 * running with the lock held. SIGQUIT stays the JVM's (a thread dump, which bin/turnstile turns off
 * so that it cannot land in the command's output).
 */
final class ChildSupervisor {
    private static final List<String> STOPPING = List.of("TERM", "INT", "HUP");
    private static final List<String> FORWARDED = List.of("USR1", "USR2", "ALRM", "WINCH");
    private static final List<String> IGNORED = List.of("PIPE", "VTALRM", "PROF", "IO", "PWR", "STKFLT", "XCPU", "XFSZ");
    private static final Duration MIN_PUMP = Duration.ofMillis(5);
    private static final Duration MAX_PUMP = Duration.ofMillis(200);

    private final Duration grace;
    private final PrintWriter err;
    private final AtomicReference<LeaseLoss> lost = new AtomicReference<>();
    private final AtomicReference<String> stopSignal = new AtomicReference<>();
    private volatile Guard guard;
    private volatile Thread waitingForLock;

    /**
     * @param grace time between SIGTERM and SIGKILL; must fit in the lease (the caller checks)
     * @param err where to say what happens
     * @param handleSignals whether to take over the process's signals (not in tests that run
     *     the CLI inside their own JVM)
     */
    ChildSupervisor(Duration grace, PrintWriter err, boolean handleSignals) {
        this.grace = grace;
        this.err = err;
        if (handleSignals) {
            handleSignals();
        }
    }

    /** Called on a Turnstile thread when the lease can no longer be proven held: kills the command now. */
    void leaseLost(LeaseLoss loss) {
        if (lost.compareAndSet(null, loss)) {
            Guard g = guard;
            boolean running = g != null && g.isRunning();
            say("the lease on '" + loss.name() + "' is lost (" + loss.reason() + "): "
                    + (running ? "killing the command" : "its guard has stopped the command"));
            if (running) {
                g.kill();
            }
        }
    }

    /**
     * Whether a signal asked turnstile to stop before the command started.
     *
     * @return the exit code for it (128 + the signal's number), or -1 if none came
     */
    int stopRequested() {
        String name = stopSignal.get();
        return name == null ? -1 : 128 + new Signal(name).getNumber();
    }

    /**
     * Marks the thread that waits for the lock (null when done), so that a stopping signal
     * interrupts the wait instead of letting it run to its end.
     */
    void waitingForLock(Thread thread) {
        waitingForLock = thread;
        if (thread != null && stopSignal.get() != null) {
            thread.interrupt();
        }
    }

    /**
     * Runs the command to its end, and what it started with it.
     *
     * @param environment changes to the command's environment (a null value removes the variable)
     * @return the command's exit code (128 + N if signal N ended it), 70 if the lease was lost or
     *     the guard died, 126 or 127 if the command could not be started
     * @throws Guard.UnavailableException if the guard cannot start: the command was not started
     */
    int run(List<String> command, Map<String, String> environment, Lease lease)
            throws InterruptedException, Guard.UnavailableException {
        Guard g = Guard.start(command, environment, grace, lease.timeLeft());
        guard = g;
        // A loss or a signal that came while the guard was starting.
        if (lost.get() != null) {
            g.kill();
        }
        String signal = stopSignal.get();
        if (signal != null) {
            g.stop(signal);
        }
        Thread pump = startDeadlinePump(g, lease);
        int code;
        try {
            code = g.waitFor();
        } finally {
            pump.interrupt();
        }
        if (lost.get() != null) {
            return ExitCodes.LEASE_LOST; // said when it happened
        }
        if (!lease.isHeld()) {
            // Frozen past the deadline: the guard has stopped the command, and this JVM, running
            // again, sees it before its own deadline check has told it.
            try {
                leaseLost(lease.lost().toCompletableFuture().get(2, TimeUnit.SECONDS));
            } catch (ExecutionException | TimeoutException e) {
                say("the lease on '" + lease.name() + "' could not be renewed in time; the command was stopped");
            }
            return ExitCodes.LEASE_LOST;
        }
        if (code < 0) {
            say("the guard process died; the command was killed");
            return ExitCodes.LEASE_LOST;
        }
        return code;
    }

    /**
     * Keeps the guard told how long the lease is held. Renewals move the deadline every TTL/3; a
     * tell every TTL/30 (5 to 200 ms) reaches the guard long before its SIGTERM point, which the
     * grace check keeps at least TTL/2 after the last renewal.
     */
    private static Thread startDeadlinePump(Guard g, Lease lease) {
        Duration left = lease.timeLeft();
        Duration period = left.dividedBy(30);
        period = period.compareTo(MIN_PUMP) < 0 ? MIN_PUMP : period.compareTo(MAX_PUMP) > 0 ? MAX_PUMP : period;
        long periodNanos = period.toNanos();
        Thread pump = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                g.deadline(lease.timeLeft());
                try {
                    Thread.sleep(periodNanos / 1_000_000, (int) (periodNanos % 1_000_000));
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "turnstile-deadline-pump");
        pump.setDaemon(true);
        pump.start();
        return pump;
    }

    private void handleSignals() {
        for (String name : STOPPING) {
            install(name, () -> {
                stopSignal.compareAndSet(null, name);
                Thread waiting = waitingForLock;
                if (waiting != null) {
                    waiting.interrupt();
                }
                Guard g = guard;
                if (g != null) {
                    say("SIG" + name + ": stopping the command and what it started (SIGKILL after " + grace.toMillis() + " ms)");
                    g.stop(name);
                }
            });
        }
        for (String name : FORWARDED) {
            install(name, () -> {
                Guard g = guard;
                if (g != null) {
                    g.signal(name);
                }
            });
        }
        for (String name : IGNORED) {
            install(name, () -> { });
        }
    }

    private static void install(String name, Runnable action) {
        try {
            Signal.handle(new Signal(name), s -> action.run());
        } catch (IllegalArgumentException unavailable) {
            // This platform has no such signal, or the JVM keeps it for itself.
        }
    }

    private void say(String message) {
        synchronized (err) {
            err.println("turnstile: " + message);
            err.flush();
        }
    }
}
