package dev.turnstile.cli;

import dev.turnstile.Lease;
import dev.turnstile.LockInfo;
import dev.turnstile.LockOptions;
import dev.turnstile.ReleaseOutcome;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.SessionBoundLeases;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
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
        customSynopsis = {"turnstile run --lock=NAME [--store=URL] [--ttl=DURATION]",
                "              [--wait=DURATION] [--at-least=DURATION] [--grace=DURATION]",
                "              [--busy-exit=CODE] [-q] [--verbose] -- CMD [ARG...]"},
        description = {"Run a command while holding a lock, so that it runs in one place at a time.",
                "The lease is renewed every TTL/3 while the command runs. The command gets TURNSTILE_LOCK, "
                        + "TURNSTILE_FENCE and TURNSTILE_TOKEN in its environment (TURNSTILE_STORE is removed). "
                        + "It runs in a process group of its own under a guard process that stops the group "
                        + "(SIGTERM, then SIGKILL) before the lease can expire: if the lease is lost, if turnstile "
                        + "is killed, and if turnstile freezes. SIGTERM, SIGINT and SIGHUP stop the command's "
                                + "whole group before the lock is released; SIGUSR1, SIGUSR2, SIGALRM and SIGWINCH "
                        + "are passed on to the command.",
                "Exit: the command's own code; 75 busy (--busy-exit); 69 store unavailable; 64 usage; "
                        + "70 lease lost (before or while the command ran, or found gone at the release); "
                        + "71 the guard could not start (needs perl); 126/127 command not executable/found."})
// picocli sets the @ParentCommand, @Spec and @Option fields before call(); NullAway cannot see that
@SuppressWarnings("NullAway.Init")
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

    @Option(names = {"-q", "--quiet-busy"},
            description = "Print nothing when the lock is busy (for cron, with --busy-exit 0: no mail for a skipped run). "
                    + "Errors are still printed.")
    boolean quietBusy;

    @Option(names = "--grace", defaultValue = "10s", paramLabel = "DURATION",
            description = "Time between SIGTERM and SIGKILL when the command is stopped. The grace period ends by "
                    + "the lease's deadline, so it must fit in half the TTL, and on a store whose leases end with "
                    + "a session (ZooKeeper) in half of what the lease has left after the acquire. "
                    + "Default: ${DEFAULT-VALUE}, or what fits if that is shorter.")
    Duration grace;

    /** Null when nothing follows {@code --} (call() refuses that). */
    @Parameters(paramLabel = "CMD", arity = "0..*", description = "The command and its arguments, after --.")
    @Nullable List<String> command;

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
        checkDuration("--ttl", ttl, LockOptions.MIN_TTL, LockOptions.MAX_DURATION);
        checkDuration("--at-least", atLeast, Duration.ZERO, LockOptions.MAX_DURATION);
        checkDuration("--wait", wait, Duration.ZERO, LockOptions.MAX_DURATION);
        if (grace.isNegative() || grace.compareTo(Duration.ofHours(1)) > 0) {
            throw new CommandLine.ParameterException(cl, "--grace must not be negative (and --grace at most 1h)");
        }
        lock = TurnstileCommand.checkLockName(lock); // in NFC, as the store sees it (TURNSTILE_LOCK, the busy report)
        checkCommandArguments(cl, command);
        Duration stopGrace = graceWithinLease(cl);
        ChildSupervisor supervisor = new ChildSupervisor(stopGrace, spec.commandLine().getErr(), top.forwardSignals());
        LockOptions options = LockOptions.builder().lockAtMostFor(ttl).lockAtLeastFor(atLeast).keepAlive(true)
                .onLost(supervisor::leaseLost).build();

        try (LockStore s = Objects.requireNonNull(store.open(top, StoreOption.Use.RUN, wait), "only READ opens no store");
                Turnstile turnstile = Turnstile.builder(s).build()) {
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
                if (!quietBusy) {
                    reportBusy(s);
                }
                return busyExit;
            }
            Lease lease = acquired.get();
            if (supervisor.stopRequested() >= 0) {
                release(lease);
                return supervisor.stopRequested();
            }
            Duration fitted = graceWithinSession(s.capability(SessionBoundLeases.class).map(SessionBoundLeases::sessionBound), stopGrace, cl);
            if (fitted == null) {
                release(lease);
                return ExitCodes.USAGE; // said why
            }
            supervisor.grace(fitted);
            Map<String, String> environment = new HashMap<>(); // a null value removes the variable
            environment.put("TURNSTILE_LOCK", lock);
            environment.put("TURNSTILE_FENCE", Long.toString(lease.fence()));
            environment.put("TURNSTILE_TOKEN", lease.token());
            environment.put("TURNSTILE_STORE", null);
            restoreLocale(top.env(), environment);
            int code;
            try {
                code = supervisor.run(command, environment, lease, ttl);
            } catch (Guard.UnavailableException e) {
                release(lease);
                spec.commandLine().getErr().println("turnstile: " + e.getMessage() + "; the command was not started");
                spec.commandLine().getErr().flush();
                return ExitCodes.GUARD_UNAVAILABLE;
            }
            if (supervisor.leaseWasLost()) {
                return ExitCodes.LEASE_LOST; // a lost lease has nothing left to release, and its loss was reported
            }
            ReleaseOutcome outcome = release(lease);
            if (outcome == ReleaseOutcome.ALREADY_EXPIRED || outcome == ReleaseOutcome.NOT_OWNER) {
                // Another run may have held the lock meanwhile (release --force, an expiry the
                // renewals did not see yet): never report success for that.
                PrintWriter err = spec.commandLine().getErr();
                err.println("turnstile: the lease on '" + lock + "' was no longer held when the command ended (" + outcome
                        + "): the lock may have gone to another run while the command ran"
                        + (code == ExitCodes.LEASE_LOST ? "" : " (the command's own exit code was " + code + ")"));
                err.flush();
                return ExitCodes.LEASE_LOST;
            }
            return code;
        }
    }

    /**
     * A store that ends a lease with its session (ZooKeeper) lets it be known held for less than
     * the TTL: its {@linkplain SessionBoundLeases#sessionBound() session bound} (the negotiated session
     * timeout less a margin) after the last answer, whatever the TTL. The guard's SIGTERM comes at
     * that deadline minus the grace period, so the grace must fit in half of it, as it must in half
     * the TTL. Read from the store once connected (the server negotiates the session), never
     * guessed from a lease's time left, which a slow acquire on a loaded host also shortens. The
     * default grace is shortened to fit; an explicit --grace that does not fit is refused.
     *
     * @return the grace to use, or null if an explicit --grace does not fit (said why)
     */
    private @Nullable Duration graceWithinSession(Optional<Duration> sessionBound, Duration stopGrace, CommandLine cl) {
        Duration fitted = graceFit(sessionBound, stopGrace, cl.getParseResult().hasMatchedOption("--grace"));
        if (fitted != null) {
            return fitted;
        }
        Duration bound = sessionBound.orElseThrow();
        PrintWriter err = spec.commandLine().getErr();
        err.println("turnstile: --grace " + show(grace) + " does not fit in the store's session: it vouches for a lease only "
                + show(bound) + " after its last answer from the server (ZooKeeper: the negotiated session timeout less a "
                + "tenth; turnstile.sessionTimeout in the URL sets it), whatever the TTL. The command must be dead before "
                + "the lease can end, so --grace may be at most half of that (" + show(bound.dividedBy(2)) + "); give a "
                + "shorter --grace or a longer session timeout");
        err.flush();
        return null;
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

    /**
     * The grace period that fits in a store's session bound (see {@link #graceWithinSession}).
     *
     * @param sessionBound the store's {@link SessionBoundLeases#sessionBound()}
     * @param grace the grace period already fitted to half the TTL
     * @param explicit whether the user gave --grace (refused if it does not fit; else shortened)
     * @return the grace to use, or null if an explicit grace does not fit
     */
    static @Nullable Duration graceFit(Optional<Duration> sessionBound, Duration grace, boolean explicit) {
        if (sessionBound.isEmpty()) {
            return grace;
        }
        Duration fits = sessionBound.get().dividedBy(2);
        if (grace.compareTo(fits) <= 0) {
            return grace;
        }
        return explicit ? null : fits;
    }

    /**
     * bin/turnstile runs the JVM under {@code LC_ALL=C.UTF-8}, so that names and arguments are
     * decoded as UTF-8 whatever the caller's locale, and passes the caller's own {@code LC_ALL} in
     * {@code TURNSTILE_ORIG_LC_ALL} ({@code set:<value>} or {@code unset}). The command gets it back.
     */
    static void restoreLocale(Map<String, String> env, Map<String, String> environment) {
        String orig = env.get(ORIG_LC_ALL);
        if (orig == null) {
            return; // started without bin/turnstile: the environment is the caller's own already
        }
        environment.put(ORIG_LC_ALL, null);
        environment.put("LC_ALL", orig.startsWith("set:") ? orig.substring(4) : null);
    }

    static final String ORIG_LC_ALL = "TURNSTILE_ORIG_LC_ALL";

    private void checkDuration(String option, Duration d, Duration min, Duration max) {
        if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), option + " " + show(d) + " is out of range: give "
                    + (min.isZero() ? "0s" : show(min)) + " to " + max.toDays() + "d");
        }
    }

    static String show(Duration d) {
        if (d.isNegative()) {
            return "-" + show(d.negated());
        }
        // in the units --ttl, --wait and --grace take (1s500ms, not Duration's 1.5s), so a limit can be typed as shown
        long ms = d.toMillis();
        if (ms < 1000) {
            return ms + "ms";
        }
        StringBuilder out = new StringBuilder();
        long[] sizes = {3_600_000, 60_000, 1000, 1};
        String[] units = {"h", "m", "s", "ms"};
        for (int i = 0; i < sizes.length; i++) {
            if (ms >= sizes[i]) {
                out.append(ms / sizes[i]).append(units[i]);
                ms %= sizes[i];
            }
        }
        return out.toString();
    }

    /**
     * An argument the JVM could not decode reached it as U+FFFD, and would reach the command as the
     * bytes of U+FFFD, not the caller's: refuse rather than run a different command.
     */
    private void checkCommandArguments(CommandLine cl, List<String> command) {
        for (int i = 0; i < command.size(); i++) {
            if (command.get(i).indexOf('\uFFFD') >= 0) {
                throw new CommandLine.ParameterException(cl, "argument " + i + " of the command ('" + command.get(i)
                        + "') is not valid UTF-8 (or holds U+FFFD): turnstile passes arguments on as UTF-8 and "
                        + "cannot pass these bytes unchanged");
            }
        }
    }

    private void reportBusy(LockStore s) {
        PrintWriter err = spec.commandLine().getErr();
        String holder = "";
        try {
            holder = s.heldLocks().stream().filter(l -> l.name().equals(lock)).findFirst()
                    .map(RunCommand::describe).orElse("");
        } catch (StoreUnavailableException | dev.turnstile.StoreSchemaException ignored) {
            // the holder is a nicety; the answer is "busy" either way
        }
        err.println("turnstile: lock '" + lock + "' is busy" + holder);
        err.flush();
    }

    private static String describe(LockInfo l) {
        return ": held by " + l.owner() + " (fence " + l.fence() + ") until " + l.expiresAt().truncatedTo(ChronoUnit.MILLIS);
    }

    /** Releases the lease; returns what the store did, or null if it could not be reached (said so). */
    private @Nullable ReleaseOutcome release(Lease lease) {
        PrintWriter err = spec.commandLine().getErr();
        try {
            return lease.release();
        } catch (StoreUnavailableException | dev.turnstile.StoreSchemaException e) {
            err.println("turnstile: warning: could not release '" + lock + "' (" + e.getMessage()
                    + "); it frees itself when its TTL passes");
            err.flush();
            return null;
        }
    }
}
