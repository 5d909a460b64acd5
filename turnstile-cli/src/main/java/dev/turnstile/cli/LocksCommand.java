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
        description = "List the locks currently held on the store: name, owner, fence, since, until (UTC).")
final class LocksCommand implements Callable<Integer> {
    @ParentCommand TurnstileCommand top;
    @Spec CommandSpec spec;
    @Mixin StoreOption store = new StoreOption();

    @Option(names = "--json", description = "Print a JSON array instead of a table.")
    boolean json;

    @Override
    public Integer call() {
        List<LockInfo> locks;
        try (LockStore s = store.open(top)) {
            locks = s.heldLocks();
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            StringBuilder b = new StringBuilder("[");
            for (LockInfo l : locks) {
                b.append(b.length() > 1 ? ",\n " : "\n ")
                        .append("{\"name\":").append(Json.quote(l.name()))
                        .append(",\"owner\":").append(Json.quote(l.owner()))
                        .append(",\"fence\":").append(l.fence())
                        .append(",\"acquiredAt\":").append(Json.quote(l.acquiredAt().toString()))
                        .append(",\"expiresAt\":").append(Json.quote(l.expiresAt().toString())).append('}');
            }
            out.println(b.append(locks.isEmpty() ? "]" : "\n]"));
        } else if (locks.isEmpty()) {
            out.println("no locks held");
        } else {
            int nameWidth = Math.max(4, locks.stream().mapToInt(l -> l.name().length()).max().orElse(4));
            int ownerWidth = Math.max(5, locks.stream().mapToInt(l -> l.owner().length()).max().orElse(5));
            String format = "%-" + nameWidth + "s  %-" + ownerWidth + "s  %8s  %-24s  %-24s%n";
            out.printf(format, "NAME", "OWNER", "FENCE", "SINCE", "UNTIL");
            for (LockInfo l : locks) {
                out.printf(format, l.name(), l.owner(), l.fence(), l.acquiredAt().truncatedTo(ChronoUnit.MILLIS),
                        l.expiresAt().truncatedTo(ChronoUnit.MILLIS));
            }
        }
        out.flush();
        return ExitCodes.OK;
    }

    /** Just enough JSON string quoting for names and owners. */
    static final class Json {
        private Json() {}

        static String quote(String s) {
            StringBuilder b = new StringBuilder("\"");
            for (char c : s.toCharArray()) {
                switch (c) {
                    case '"' -> b.append("\\\"");
                    case '\\' -> b.append("\\\\");
                    default -> {
                        if (c < 0x20) {
                            b.append(String.format("\\u%04x", (int) c));
                        } else {
                            b.append(c);
                        }
                    }
                }
            }
            return b.append('"').toString();
        }
    }
}
