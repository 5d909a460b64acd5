package dev.turnstile.cli;

import dev.turnstile.Lease;
import dev.turnstile.LeaseLoss;
import dev.turnstile.LeaseLostException;
import dev.turnstile.StoreUnavailableException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
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

    private volatile Duration grace;
    private final PrintWriter err;
    private final AtomicReference<LeaseLoss> lost = new AtomicReference<>();
    private final AtomicReference<String> stopSignal = new AtomicReference<>();
    /** Orders a loss against the start of the command, so that what is said about it is true. */
    private final Object starting = new Object();
    /** The guard, once {@link #run} started it; null before. */
    private volatile @Nullable Guard guard;
    /** The thread waiting for the lock, while one is; else null. */
    private volatile @Nullable Thread waitingForLock;

    /**
     * @param grace time between SIGTERM and SIGKILL; must fit in the lease (the caller checks,
     *     and may shorten it with {@link #grace(Duration)} once the lease is acquired)
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

    /** Sets the grace period, before {@link #run}. */
    void grace(Duration grace) {
        this.grace = grace;
    }

    /** Called on a Turnstile thread when the lease can no longer be proven held: kills the command now. */
    void leaseLost(LeaseLoss loss) {
        Guard g;
        synchronized (starting) {
            if (!lost.compareAndSet(null, loss)) {
                return;
            }
            g = guard;
            say("the lease on '" + loss.name() + "' is lost (" + loss.reason() + "): "
                    + (g != null && g.started() ? "killing the command"
                            : "the command is not started"));
        }
        if (g != null && g.isRunning() && !g.kill()) {
            say("the guard did not answer within " + Guard.ACK_TIMEOUT.toMillis() + " ms (frozen?): turnstile "
                    + "killed the command, what it started, and the guard");
        }
    }

    /** Whether the lease was reported lost (and that said). */
    boolean leaseWasLost() {
        return lost.get() != null;
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
    void waitingForLock(@Nullable Thread thread) {
        waitingForLock = thread;
        if (thread != null && stopSignal.get() != null) {
            thread.interrupt();
        }
    }

    /**
     * Runs the command to its end, and what it started. The command is started only after the
     * guard is up and the lease was confirmed with the store (an extend), with the deadline taken
     * at the moment the guard is told; a loss, a stopping signal or a deadline too close before
     * then means it never runs.
     *
     * @param environment changes to the command's environment (a null value removes the variable)
     * @param ttl the lease's TTL, renewed once to confirm the lease before the command starts
     * @return the command's exit code (128 + N if signal N ended it, or stopped turnstile before
     *     the command started), 70 if the lease was lost, the guard died or the command could not
     *     be started in time, 69 if the store could not confirm the lease, 126 or 127 if the
     *     command could not be started
     * @throws Guard.UnavailableException if the guard cannot start: the command was not started
     */
    int run(List<String> command, Map<String, String> environment, Lease lease, Duration ttl)
            throws InterruptedException, Guard.UnavailableException {
        Guard g = Guard.start(command, environment, grace);
        guard = g;
        Integer notStarted = startUnderConfirmedLease(g, lease, ttl);
        if (notStarted != null) {
            g.cancel();
            return notStarted;
        }
        Thread pump = startDeadlinePump(g, lease);
        int code;
        try {
            code = g.waitFor();
        } finally {
            pump.interrupt();
        }
        if (code == Guard.NOT_STARTED) {
            // The deadline the guard read (or looked at again before exec) left no more than the
            // grace period: this JVM or the guard paused after the start was sent. Nothing ran.
            if (stopRequested() >= 0) {
                return stopRequested();
            }
            if (lost.get() == null) {
                say("the command was not started: its guard refused (" + g.refusal() + "): the lease was too "
                        + "close to its end (turnstile or the guard paused?)");
            }
            return ExitCodes.LEASE_LOST;
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
        if (g.killedByJvm()) {
            return ExitCodes.LEASE_LOST; // said when it happened
        }
        if (code < 0) {
            say("the guard process died; the command was killed");
            return ExitCodes.LEASE_LOST;
        }
        return code;
    }

    /**
     * Confirms the lease and tells the guard to start the command.
     *
     * @return null once the guard was told to start, else the exit code for a command never started
     */
    private @Nullable Integer startUnderConfirmedLease(Guard g, Lease lease, Duration ttl) {
        if (stopRequested() >= 0) {
            return stopRequested();
        }
        try {
            lease.extend(ttl);
        } catch (LeaseLostException e) {
            return ExitCodes.LEASE_LOST; // leaseLost has said so
        } catch (StoreUnavailableException e) {
            say("could not confirm the lease on '" + lease.name() + "' with the store before starting the command ("
                    + e.getMessage() + "); the command was not started");
            return ExitCodes.UNAVAILABLE;
        }
        synchronized (starting) {
            if (lost.get() != null) {
                return ExitCodes.LEASE_LOST;
            }
            if (stopRequested() >= 0) {
                return stopRequested();
            }
            // The deadline is taken now, absolute: a pause from here on cannot stretch it.
            long now = System.nanoTime();
            Duration left = lease.timeLeft();
            if (left.compareTo(grace) <= 0) {
                say("the lease on '" + lease.name() + "' is held for only " + left.toMillis() + " ms more, not more than "
                        + "the grace period (" + grace.toMillis() + " ms): the command was not started");
                return ExitCodes.LEASE_LOST;
            }
            g.begin(now + left.toNanos());
        }
        return null;
    }

    /**
     * Keeps the guard told until when the lease is held. Renewals move the deadline every TTL/3; a
     * tell every TTL/30 (5 to 200 ms) reaches the guard long before its SIGTERM point, which the
     * grace check keeps at least TTL/2 after the last renewal. While the guard does not answer
     * (frozen), nothing is sent, and this JVM does the guard's job: at the lease's deadline minus
     * the grace period it kills the command's tree and the guard.
     */
    private Thread startDeadlinePump(Guard g, Lease lease) {
        Duration left = lease.timeLeft();
        Duration period = left.dividedBy(30);
        period = period.compareTo(MIN_PUMP) < 0 ? MIN_PUMP : period.compareTo(MAX_PUMP) > 0 ? MAX_PUMP : period;
        long periodNanos = period.toNanos();
        Thread pump = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                long sleep = periodNanos;
                long now = System.nanoTime();
                long untilStop = lease.timeLeft().minus(grace).toNanos();
                if (g.unansweredFor().compareTo(Guard.ACK_TIMEOUT) <= 0) {
                    g.deadline(now + lease.timeLeft().toNanos());
                } else if (untilStop <= 0) {
                    // Once more after a moment: after a pause of this JVM, the answers that came
                    // meanwhile may not have been read yet.
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException e) {
                        return;
                    }
                    if (g.unansweredFor().compareTo(Guard.ACK_TIMEOUT) <= 0) {
                        continue;
                    }
                    if (g.isRunning()) {
                        g.killEverything();
                        say("the guard did not answer for " + g.unansweredFor().toMillis() + " ms (frozen?) and the "
                                + "lease on '" + lease.name() + "' is within the grace period of its end: turnstile "
                                + "killed the command, what it started, and the guard");
                    }
                    return;
                } else {
                    sleep = Math.min(sleep, untilStop);
                }
                try {
                    Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
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
                if (g != null && g.started()) {
                    say("SIG" + name + ": stopping the command and what it started (SIGKILL after " + grace.toMillis() + " ms)");
                    if (!g.stop(name)) {
                        say("the guard did not answer within " + Guard.STOP_ACK_TIMEOUT.toMillis() + " ms (frozen?): "
                                + "turnstile killed the command, what it started, and the guard");
                    }
                } else if (g != null) {
                    g.stop(name); // not started yet: the guard ends without starting it
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
