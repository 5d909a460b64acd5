package dev.turnstile.cli;

import dev.turnstile.LeaseLoss;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import sun.misc.Signal;

/**
 * Runs the command under the lease: starts it with the lease in its environment, forwards
 * SIGINT/SIGTERM/SIGHUP to it, and stops it (SIGTERM to it and its descendants, SIGKILL after the
 * grace period) the moment the lease is lost.
 */
final class ChildSupervisor {
    private static final List<String> FORWARDED = List.of("INT", "TERM", "HUP");

    private final Duration grace;
    private final PrintWriter err;
    private final boolean forwardSignals;
    private final AtomicReference<LeaseLoss> lost = new AtomicReference<>();
    private volatile Process process;

    ChildSupervisor(Duration grace, PrintWriter err, boolean forwardSignals) {
        this.grace = grace;
        this.err = err;
        this.forwardSignals = forwardSignals;
    }

    /** Called on a Turnstile thread when the lease can no longer be proven held. */
    void leaseLost(LeaseLoss loss) {
        if (lost.compareAndSet(null, loss)) {
            Process p = process;
            if (p != null) {
                stop(p, loss);
            }
        }
    }

    /**
     * Runs the command to its end.
     *
     * @return the command's exit code (128 + signal if a signal ended it), 70 if the lease was
     *     lost, 126 or 127 if it could not be started
     */
    int run(List<String> command, Map<String, String> extraEnv, List<String> removedEnv) throws InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
        removedEnv.forEach(pb.environment()::remove);
        pb.environment().putAll(extraEnv);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            String msg = String.valueOf(e.getMessage());
            boolean notFound = msg.contains("error=2,");
            err.println("turnstile: cannot run '" + command.get(0) + "': "
                    + (notFound ? "command not found" : msg.replaceFirst("^Cannot run program \"[^\"]*\"(: )?", "")));
            err.flush();
            return notFound ? ExitCodes.NOT_FOUND : ExitCodes.NOT_EXECUTABLE;
        }
        process = p;
        if (forwardSignals) {
            forwardSignals(p);
        }
        LeaseLoss early = lost.get();
        if (early != null) {
            stop(p, early);
        }
        int code = p.waitFor();
        LeaseLoss loss = lost.get();
        if (loss != null) {
            err.println("turnstile: the lease on '" + loss.name() + "' was lost (" + loss.reason()
                    + "); the command was stopped (it exited with " + code + ")");
            err.flush();
            return ExitCodes.LEASE_LOST;
        }
        return code;
    }

    private void stop(Process p, LeaseLoss loss) {
        Thread stopper = new Thread(() -> {
            err.println("turnstile: lease on '" + loss.name() + "' lost: stopping the command (SIGTERM, SIGKILL after "
                    + grace.toMillis() + " ms)");
            err.flush();
            List<ProcessHandle> tree = p.descendants().toList();
            p.destroy();
            tree.forEach(ProcessHandle::destroy);
            try {
                if (!p.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
            tree.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
        }, "turnstile-stopper");
        stopper.setDaemon(true);
        stopper.start();
    }

    /** The JVM's own handlers would exit at once and orphan the command; forward instead. */
    private static void forwardSignals(Process p) {
        for (String name : FORWARDED) {
            try {
                Signal.handle(new Signal(name), s -> {
                    if (name.equals("TERM")) {
                        p.destroy();
                    } else {
                        try {
                            new ProcessBuilder("kill", "-" + name, Long.toString(p.pid())).start();
                        } catch (IOException ignored) {
                            p.destroy();
                        }
                    }
                });
            } catch (IllegalArgumentException unsupported) {
                // this platform does not have the signal
            }
        }
    }
}
