package dev.turnstile.cli;

import dev.turnstile.LockInfo;
import dev.turnstile.Turnstile;
import dev.turnstile.console.ReleaseRecord;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.StoreUrls;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code turnstile release --force NAME}: frees a lock whoever holds it. */
@Command(name = "release", mixinStandardHelpOptions = true,
        customSynopsis = "turnstile release --force [--store=URL] [--verbose] NAME",
        description = {"Free a lock whoever holds it (administrative). Its holder learns at once on Redis, ZooKeeper "
                + "and PostgreSQL (elsewhere at its next renewal), and a 'turnstile run' holder stops its command "
                + "and exits 70. The fence keeps growing.",
                "Every forced release is reported on stderr as one line: 'turnstile: release --force: lock 'NAME' "
                        + "freed (held by 'OWNER', fence F) by user 'U' from host H (pid P, parent pid Q) at TIME on STORE', "
                        + "the record 'turnstile console' writes too, and sent to syslog "
                        + "(tag turnstile, facility user, priority notice) where the logger command exists.",
                "Never creates a store: a SQLite path that does not exist is an error.",
                "Exit 0 if a held lock was freed, 1 if it was not held."})
// picocli sets the @ParentCommand, @Spec and @Parameters fields before call(); NullAway cannot see that
@SuppressWarnings("NullAway.Init")
final class ReleaseCommand implements Callable<Integer> {
    @ParentCommand TurnstileCommand top;
    @Spec CommandSpec spec;
    @Mixin StoreOption store = new StoreOption();

    @Option(names = "--force", description = "Required: confirms freeing a lock this command does not hold.")
    boolean force;

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock name.")
    String name;

    @Override
    public Integer call() {
        name = TurnstileCommand.checkLockName(name);
        if (!force) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "release frees a lock that this command does not hold: add --force to confirm");
        }
        boolean freed;
        LockInfo before;
        try (LockStore s = store.open(top, StoreOption.Use.READ, java.time.Duration.ZERO)) {
            Turnstile turnstile = s == null ? null : Turnstile.builder(s).build();
            // who held it and with which fence, for the record: read just before, as the console does. Only
            // for the record: a listing that fails (one entry the store cannot read back) must not stop the release.
            before = null;
            if (turnstile != null) {
                try {
                    before = turnstile.heldLocks().stream().filter(l -> l.name().equals(name)).findFirst().orElse(null);
                } catch (RuntimeException e) {
                    spec.commandLine().getErr().println("turnstile: release --force: cannot tell who held '"
                            + LocksCommand.printable(name) + "' (listing the locks failed: " + e.getMessage() + "); releasing it");
                }
            }
            freed = turnstile != null && turnstile.forceRelease(name);
        }
        String audit = new ReleaseRecord(name, freed, freed && before != null ? before.owner() : null,
                freed && before != null ? before.fence() : -1, userAsking(), whereAsked(), "release --force",
                Instant.now(), StoreUrls.redact(store.resolve(top))).line();
        PrintWriter err = spec.commandLine().getErr();
        err.println("turnstile: " + audit);
        err.flush();
        if (freed && top.forwardSignals()) {
            syslog(top.secrets().apply(audit));
        }
        spec.commandLine().getOut().println(freed ? "released lock '" + name + "'" : "lock '" + name + "' was not held");
        spec.commandLine().getOut().flush();
        return freed ? ExitCodes.OK : ExitCodes.NOT_HELD;
    }

    /** Who asked: the user, and the login name where sudo recorded another. */
    private String userAsking() {
        String user = System.getProperty("user.name");
        String sudo = top.env().get("SUDO_USER");
        return user + (sudo != null && !sudo.equals(user) ? " (sudo from " + sudo + ")" : "");
    }

    /** Where from: host, pid and parent pid. */
    private String whereAsked() {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.net.UnknownHostException e) {
            host = top.env().getOrDefault("HOSTNAME", "unknown");
        }
        ProcessHandle self = ProcessHandle.current();
        return "host " + host + " (pid " + self.pid() + ", parent pid " + self.parent().map(p -> Long.toString(p.pid())).orElse("?") + ")";
    }

    /**
     * A forced release breaks someone's exclusion, so it is also left where administrators look
     * later: syslog through logger(1), best effort (no logger, no syslog: stderr still has it).
     */
    static void syslog(String line) {
        try {
            Process p = new ProcessBuilder("logger", "-t", "turnstile", "-p", "user.notice", "--", line)
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            p.waitFor(2, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.io.IOException e) {
            // no logger on this machine
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
