package dev.turnstile.cli;

import dev.turnstile.spi.LockStoreFactory;
import dev.turnstile.spi.LockStores;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code turnstile schema}: prints (or applies) the DDL a SQL store needs. */
@Command(name = "schema", mixinStandardHelpOptions = true,
        description = {"Print the DDL that creates the lock table for the store's database (without connecting, "
                        + "unless --apply).",
                "The table name comes from the URL option turnstile.table (default turnstile_locks)."})
// picocli sets the @ParentCommand and @Spec fields before call(); NullAway cannot see that
@SuppressWarnings("NullAway.Init")
final class SchemaCommand implements Callable<Integer> {
    @ParentCommand TurnstileCommand top;
    @Spec CommandSpec spec;
    @Mixin StoreOption store = new StoreOption();

    @Option(names = "--apply", description = "Also run the DDL on the store (CREATE TABLE IF NOT EXISTS).")
    boolean apply;

    @Override
    public Integer call() {
        String url = store.resolve(top);
        LockStoreFactory factory = LockStores.factoryFor(url);
        String ddl = factory.schema(url);
        spec.commandLine().getOut().print(ddl.isEmpty() ? "-- this store needs no schema\n" : ddl);
        spec.commandLine().getOut().flush();
        int written = top.outputWritten(spec.commandLine(), "the schema");
        if (written != ExitCodes.OK && !apply) {
            return written;
        }
        if (apply) {
            if (store.isEmbedded(top)) {
                store.open(top).close();
            }
            factory.applySchema(url);
            spec.commandLine().getErr().println("turnstile: schema applied");
            spec.commandLine().getErr().flush();
        }
        return written;
    }
}
