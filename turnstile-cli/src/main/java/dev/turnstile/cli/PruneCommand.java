package dev.turnstile.cli;

import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code turnstile prune --unused-for 7d}: forgets the lock names nobody has used for that long. */
@Command(name = "prune", mixinStandardHelpOptions = true,
        customSynopsis = "turnstile prune --unused-for=DURATION [--store=URL] [--verbose]",
        description = {"Forget the lock names nobody has taken for at least DURATION and that are free now (on "
                + "PostgreSQL, MariaDB/MySQL, H2 and MongoDB also only once their lease ended DURATION ago), so that a "
                + "store used with names per customer or per file does not grow forever. Safe beside running locks and "
                + "other prunes: a held lock (or one kept by lockAtLeastFor) is never touched, and a forgotten name taken "
                + "again gets a fence above every fence it had.",
                "The SQL stores and MongoDB keep the highest forgotten fence in a floor row; Redis forgets a name only when "
                        + "its fence is DURATION below the server's clock, so on Redis DURATION is also how far that clock may "
                        + "later step back: give a day or more. ZooKeeper keeps nothing for a free lock (exit 64: nothing to prune).",
                "Never creates a store or its lock table (unless the store URL asks for it with turnstile.createFile or "
                        + "turnstile.createTable).",
                "Exit 0 with the number forgotten on stdout; 64 for a bad duration or a store that cannot prune; 69 if the "
                        + "store is unavailable (names forgotten before the failure stay forgotten)."})
// picocli sets the @ParentCommand, @Spec and @Option fields before call(); NullAway cannot see that
@SuppressWarnings("NullAway.Init")
final class PruneCommand implements Callable<Integer> {
    @ParentCommand TurnstileCommand top;
    @Spec CommandSpec spec;
    @Mixin StoreOption store = new StoreOption();

    @Option(names = "--unused-for", required = true, paramLabel = "DURATION",
            description = "How long a name must have been free: 0 up to 366d, e.g. 7d, 12h, P30D.")
    Duration unusedFor;

    @Override
    public Integer call() {
        if (unusedFor.isNegative() || unusedFor.compareTo(Duration.ofDays(366)) > 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--unused-for " + RunCommand.show(unusedFor)
                    + " is out of range: give 0s to 366d, well above your longest lock, e.g. 7d");
        }
        long pruned;
        try (LockStore s = store.open(top, StoreOption.Use.PRUNE, Duration.ZERO)) {
            if (s == null) {
                pruned = 0; // the embedded file does not exist: no lock was ever taken here
            } else {
                try {
                    pruned = Turnstile.builder(s).build().pruneUnused(unusedFor);
                } catch (UnsupportedOperationException e) {
                    spec.commandLine().getErr().println("turnstile: prune: " + e.getMessage());
                    return ExitCodes.USAGE;
                }
            }
        }
        spec.commandLine().getOut().println("pruned " + pruned + " lock name" + (pruned == 1 ? "" : "s") + " unused for "
                + RunCommand.show(unusedFor));
        spec.commandLine().getOut().flush();
        return ExitCodes.OK;
    }
}
