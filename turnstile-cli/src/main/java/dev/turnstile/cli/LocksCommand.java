package dev.turnstile.cli;

import dev.turnstile.LockInfo;
import dev.turnstile.spi.LockStore;
import java.io.PrintWriter;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code turnstile locks}: who holds what, since when, until when, with which fence. */
@Command(name = "locks", mixinStandardHelpOptions = true,
        description = {"List the locks currently held on the store: name, owner, fence, since, until (UTC).",
                "Never creates a store: a SQLite path that does not exist is an error (the embedded default "
                        + "that does not exist yet holds no locks)."})
// picocli sets the @ParentCommand and @Spec fields before call(); NullAway cannot see that
@SuppressWarnings("NullAway.Init")
final class LocksCommand implements Callable<Integer> {
    @ParentCommand TurnstileCommand top;
    @Spec CommandSpec spec;
    @Mixin StoreOption store = new StoreOption();

    @Option(names = "--json", description = "Print a JSON array instead of a table.")
    boolean json;

    @Override
    public Integer call() throws java.io.IOException {
        List<LockInfo> locks;
        try (LockStore s = store.open(top, StoreOption.Use.READ, java.time.Duration.ZERO)) {
            locks = s == null ? List.of() : s.heldLocks();
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            // Jackson is loaded here only, so that 'run' does not pay for it at start-up.
            JsonLocks.write(out, locks);
        } else if (locks.isEmpty()) {
            out.println("no locks held");
        } else {
            table(out, locks);
        }
        out.flush();
        return top.outputWritten(spec.commandLine(), "the locks");
    }

    /** The locks as a table whose columns are as wide as their widest cell. */
    static void table(PrintWriter out, List<LockInfo> locks) {
        List<String[]> rows = locks.stream().map(l -> new String[] {printable(l.name()), printable(l.owner()),
                Long.toString(l.fence()), l.acquiredAt().truncatedTo(ChronoUnit.MILLIS).toString(),
                l.expiresAt().truncatedTo(ChronoUnit.MILLIS).toString()}).toList();
        int nameWidth = Math.max(4, rows.stream().mapToInt(r -> r[0].length()).max().orElse(4));
        int ownerWidth = Math.max(5, rows.stream().mapToInt(r -> r[1].length()).max().orElse(5));
        // fences grow without bound (ZooKeeper's are zxids, 16 digits and more): as wide as the widest
        int fenceWidth = Math.max(8, rows.stream().mapToInt(r -> r[2].length()).max().orElse(8));
        String format = "%-" + nameWidth + "s  %-" + ownerWidth + "s  %" + fenceWidth + "s  %-24s  %-24s%n";
        out.printf(format, "NAME", "OWNER", "FENCE", "SINCE", "UNTIL");
        for (String[] r : rows) {
            out.printf(format, (Object[]) r);
        }
    }

    /**
     * A name as the table shows it: control characters, line and paragraph separators, format and
     * other invisible characters, and backslashes escaped as JSON escapes them ({@code \n}, {@code
     * \u001b}, {@code \\}), so a name can neither break the table's lines, send escape sequences to
     * the terminal, nor pass for another name. The console shows names the same way.
     */
    static String printable(String s) {
        return dev.turnstile.console.Printable.of(s);
    }
}
