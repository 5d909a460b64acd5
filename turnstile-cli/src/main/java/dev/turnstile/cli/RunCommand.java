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
import java.util.ArrayList;
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
                        + "If the lease is lost the command gets SIGTERM, then SIGKILL after --grace, and turnstile "
                        + "exits 70. SIGINT, SIGTERM and SIGHUP are forwarded to the command.",
                "Exit: the command's own code; 75 busy (--busy-exit); 69 store unavailable; 64 usage; "
                        + "70 lease lost; 127 command not found."})
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
            description = "After a lost lease, time between SIGTERM and SIGKILL. Default: ${DEFAULT-VALUE}.")
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
        checkDuration("--ttl", ttl, LockOptions.MIN_TTL, LockOptions.MAX_DURATION);
        checkDuration("--at-least", atLeast, Duration.ZERO, LockOptions.MAX_DURATION);
        checkDuration("--wait", wait, Duration.ZERO, LockOptions.MAX_DURATION);
        if (grace.isNegative() || grace.compareTo(Duration.ofHours(1)) > 0) {
            throw new CommandLine.ParameterException(cl, "--grace must not be negative (and --grace at most 1h)");
        }
        TurnstileCommand.checkLockName(lock);
        checkCommandArguments(cl);
        ChildSupervisor supervisor = new ChildSupervisor(grace, spec.commandLine().getErr(), top.forwardSignals());
        LockOptions options = LockOptions.builder().lockAtMostFor(ttl).lockAtLeastFor(atLeast).keepAlive(true)
                .onLost(supervisor::leaseLost).build();

        try (LockStore s = store.open(top, StoreOption.Use.RUN, wait); Turnstile turnstile = Turnstile.builder(s).build()) {
            Optional<Lease> acquired = wait.isZero() ? turnstile.tryAcquire(lock, options)
                    : turnstile.acquire(lock, options, wait);
            if (acquired.isEmpty()) {
                if (!quietBusy) {
                    reportBusy(s);
                }
                return busyExit;
            }
            Lease lease = acquired.get();
            Map<String, String> extraEnv = new HashMap<>(Map.of("TURNSTILE_LOCK", lock,
                    "TURNSTILE_FENCE", Long.toString(lease.fence()), "TURNSTILE_TOKEN", lease.token()));
            List<String> removedEnv = new ArrayList<>(List.of("TURNSTILE_STORE"));
            restoreLocale(top.env(), extraEnv, removedEnv);
            int code = supervisor.run(command, extraEnv, removedEnv);
            release(lease);
            return code;
        }
    }

    /**
     * bin/turnstile runs the JVM under {@code LC_ALL=C.UTF-8}, so that names and arguments are
     * decoded as UTF-8 whatever the caller's locale, and passes the caller's own {@code LC_ALL} in
     * {@code TURNSTILE_ORIG_LC_ALL} ({@code set:<value>} or {@code unset}). The command gets it back.
     */
    static void restoreLocale(Map<String, String> env, Map<String, String> extraEnv, List<String> removedEnv) {
        String orig = env.get(ORIG_LC_ALL);
        if (orig == null) {
            return; // started without bin/turnstile: the environment is the caller's own already
        }
        removedEnv.add(ORIG_LC_ALL);
        if (orig.startsWith("set:")) {
            extraEnv.put("LC_ALL", orig.substring(4));
        } else {
            removedEnv.add("LC_ALL");
        }
    }

    static final String ORIG_LC_ALL = "TURNSTILE_ORIG_LC_ALL";

    private void checkDuration(String option, Duration d, Duration min, Duration max) {
        if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), option + " " + show(d) + " is out of range: give "
                    + (min.isZero() ? "0s" : show(min)) + " to " + max.toDays() + "d");
        }
    }

    private static String show(Duration d) {
        if (d.isNegative()) {
            return "-" + show(d.negated());
        }
        return d.toMillis() < 1000 ? d.toMillis() + "ms" : d.toString().substring(2).toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * An argument the JVM could not decode reached it as U+FFFD, and would reach the command as the
     * bytes of U+FFFD, not the caller's: refuse rather than run a different command.
     */
    private void checkCommandArguments(CommandLine cl) {
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
