package dev.turnstile.cli;

import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
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
        description = {"Free a lock whoever holds it (administrative). Its holder learns at its next renewal, and a "
                + "'turnstile run' holder stops its command. The fence keeps growing.",
                "Exit 0 if a held lock was freed, 1 if it was not held."})
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
        Turnstile.checkLockName(name);
        if (!force) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "release frees a lock that this command does not hold: add --force to confirm");
        }
        try (LockStore s = store.open(top)) {
            boolean freed = Turnstile.builder(s).build().forceRelease(name);
            spec.commandLine().getOut().println(freed ? "released lock '" + name + "'" : "lock '" + name + "' was not held");
            spec.commandLine().getOut().flush();
            return freed ? ExitCodes.OK : ExitCodes.NOT_HELD;
        }
    }
}
