package dev.turnstile.cli;

import dev.turnstile.Lease;
import dev.turnstile.LockInfo;
import dev.turnstile.LockOptions;
import dev.turnstile.ReleaseOutcome;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code turnstile run --lock NAME -- CMD…}: a distributed flock. */
@Command(name = "run", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run a command while holding a lock, so that it runs in one place at a time.",
                "The lease is renewed every TTL/3 while the command runs. The command gets TURNSTILE_LOCK, "
                        + "TURNSTILE_FENCE and TURNSTILE_TOKEN in its environment (TURNSTILE_STORE is removed). "
                        + "It runs in a process group of its own under a guard process that stops the group "
                        + "(SIGTERM, then SIGKILL) before the lease can expire: if the lease is lost, if turnstile "
                        + "is killed, and if turnstile freezes. SIGTERM, SIGINT and SIGHUP stop the command's "
                                + "whole group before the lock is released; SIGUSR1, SIGUSR2, SIGALRM and SIGWINCH "
                        + "are passed on to the command.",
                "Exit: the command's own code; 75 busy (--busy-exit); 69 store unavailable; 64 usage; "
                        + "70 lease lost; 71 the guard could not start (needs perl); 126/127 command not executable/found."})
final class RunCommand implements Callable<Integer> {
    @ParentCommand TurnstileCommand top;
    @Spec CommandSpec spec;
    @Mixin StoreOption store = new StoreOption();

    @Option(names = "--lock", required = true, paramLabel = "NAME", description = "The lock name.")
    String lock;

    @Option(names = "--ttl", defaultValue = "5m", paramLabel = "DURATION",
            description = "Lease time to live (lockAtMostFor); a crashed holder frees the lock after this. Default: ${DEFAULT-VALUE}.")
    Duration ttl;

    @Option(names = "--at-least", defaultValue = "0s", paramLabel = "DURATION",
            description = "Hold the lock at least this long from the start (lockAtLeastFor), even if the command ends sooner. Default: ${DEFAULT-VALUE}.")
    Duration atLeast;

    @Option(names = "--wait", defaultValue = "0s", paramLabel = "DURATION",
            description = "Wait up to this long for a busy lock. Default: ${DEFAULT-VALUE} (one try).")
    Duration wait;

    @Option(names = "--busy-exit", defaultValue = "75", paramLabel = "CODE",
            description = "Exit code when the lock stays busy, 0-255. Default: ${DEFAULT-VALUE} (EX_TEMPFAIL).")
    int busyExit;

    @Option(names = "--grace", defaultValue = "10s", paramLabel = "DURATION",
            description = "Time between SIGTERM and SIGKILL when the command is stopped. The grace period ends by "
                    + "the lease's deadline, so it must fit in half the TTL. Default: ${DEFAULT-VALUE}, "
                    + "or half the TTL if that is shorter.")
    Duration grace;

    @Parameters(paramLabel = "CMD", arity = "0..*", description = "The command and its arguments, after --.")
    List<String> command;

    @Override
    public Integer call() throws InterruptedException {
        CommandLine cl = spec.commandLine();
        if (!cl.getParseResult().originalArgs().contains("--")) {
            throw new CommandLine.ParameterException(cl, "put -- before the command: turnstile run --lock NAME -- CMD [ARGS...]");
        }
        if (command == null || command.isEmpty()) {
            throw new CommandLine.ParameterException(cl, "give the command to run after --");
        }
        if (busyExit < 0 || busyExit > 255) {
            throw new CommandLine.ParameterException(cl, "--busy-exit " + busyExit + " is not an exit code: give 0 to 255");
        }
        if (wait.isNegative() || grace.isNegative() || grace.compareTo(Duration.ofHours(1)) > 0
                || wait.compareTo(LockOptions.MAX_DURATION) > 0) {
            throw new CommandLine.ParameterException(cl, "--wait and --grace must not be negative (and --grace at most 1h)");
        }
        Duration stopGrace = graceWithinLease(cl);
        Turnstile.checkLockName(lock);
        ChildSupervisor supervisor = new ChildSupervisor(stopGrace, spec.commandLine().getErr(), top.forwardSignals());
        LockOptions options = LockOptions.builder().lockAtMostFor(ttl).lockAtLeastFor(atLeast).keepAlive(true)
                .onLost(supervisor::leaseLost).build();

        try (LockStore s = store.open(top); Turnstile turnstile = Turnstile.builder(s).build()) {
            Optional<Lease> acquired;
            supervisor.waitingForLock(Thread.currentThread());
            try {
                acquired = wait.isZero() ? turnstile.tryAcquire(lock, options) : turnstile.acquire(lock, options, wait);
            } catch (InterruptedException e) {
                if (supervisor.stopRequested() < 0) {
                    throw e;
                }
                return supervisor.stopRequested(); // nothing is held
            } finally {
                supervisor.waitingForLock(null);
                Thread.interrupted();
            }
            if (acquired.isEmpty()) {
                reportBusy(s);
                return busyExit;
            }
            Lease lease = acquired.get();
            if (supervisor.stopRequested() >= 0) {
                release(lease);
                return supervisor.stopRequested();
            }
            Map<String, String> environment = new HashMap<>();
            environment.put("TURNSTILE_LOCK", lock);
            environment.put("TURNSTILE_FENCE", Long.toString(lease.fence()));
            environment.put("TURNSTILE_TOKEN", lease.token());
            environment.put("TURNSTILE_STORE", null);
            int code;
            try {
                code = supervisor.run(command, environment, lease);
            } catch (Guard.UnavailableException e) {
                release(lease);
                spec.commandLine().getErr().println("turnstile: " + e.getMessage() + "; the command was not started");
                spec.commandLine().getErr().flush();
                return ExitCodes.GUARD_UNAVAILABLE;
            }
            if (code != ExitCodes.LEASE_LOST) {
                release(lease); // a lost lease has nothing left to release, and its loss was reported
            }
            return code;
        }
    }

    /**
     * The command must be dead before the store can hand the lock on, so SIGTERM comes at the
     * lease's deadline minus the grace period. Renewals come every TTL/3; half the TTL leaves room
     * for one to fail and the next to be tried before a healthy command is stopped. A grace the
     * user asked for that does not fit is refused; the default is shortened to fit.
     */
    private Duration graceWithinLease(CommandLine cl) {
        Duration fits = ttl.dividedBy(2);
        if (grace.compareTo(fits) <= 0) {
            return grace;
        }
        if (cl.getParseResult().hasMatchedOption("--grace")) {
            throw new CommandLine.ParameterException(cl, "--grace " + show(grace) + " does not fit in --ttl "
                    + show(ttl) + ": the command must be dead before the lease can expire, so --grace "
                    + "may be at most half the TTL (" + show(fits) + "); give a shorter --grace or a longer --ttl");
        }
        return fits;
    }

    private static String show(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
    }

    private void reportBusy(LockStore s) {
        PrintWriter err = spec.commandLine().getErr();
        String holder = "";
        try {
            holder = s.heldLocks().stream().filter(l -> l.name().equals(lock)).findFirst()
                    .map(RunCommand::describe).orElse("");
        } catch (StoreUnavailableException ignored) {
            // the holder is a nicety; the answer is "busy" either way
        }
        err.println("turnstile: lock '" + lock + "' is busy" + holder);
        err.flush();
    }

    private static String describe(LockInfo l) {
        return ": held by " + l.owner() + " (fence " + l.fence() + ") until " + l.expiresAt().truncatedTo(ChronoUnit.MILLIS);
    }

    private void release(Lease lease) {
        PrintWriter err = spec.commandLine().getErr();
        try {
            ReleaseOutcome outcome = lease.release();
            if (outcome == ReleaseOutcome.ALREADY_EXPIRED || outcome == ReleaseOutcome.NOT_OWNER) {
                err.println("turnstile: warning: the lease on '" + lock + "' was no longer held at the end (" + outcome + ")");
            }
        } catch (StoreUnavailableException e) {
            err.println("turnstile: warning: could not release '" + lock + "' (" + e.getMessage()
                    + "); it frees itself when its TTL passes");
        }
        err.flush();
    }
}
