package dev.turnstile.cli;

import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.StoreUrls;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code turnstile}: the command-line tool. Subcommands: run, locks, release, schema. */
@Command(name = "turnstile", mixinStandardHelpOptions = true, versionProvider = TurnstileCommand.Version.class,
        description = "Distributed locks for cron and scripts: run a command in exactly one place at a time.",
        footerHeading = "%nExit codes:%n",
        footer = {"  0    the command ran and exited 0 (run), or the subcommand succeeded",
                "  N    the command's own exit code (run)",
                "  1    release --force: the lock was not held",
                "  64   usage error: bad flag, lock name, duration or store URL",
                "  69   store unavailable: unreachable, wrong credentials, or lock table missing",
                "  70   the lease was lost while the command ran; the command was stopped",
                "  71   the guard that stops the command if turnstile dies could not start (needs perl)",
                "  75   the lock was busy (run; change with --busy-exit)",
                "  126  the command cannot be executed; 127 the command was not found"})
public final class TurnstileCommand implements java.util.concurrent.Callable<Integer> {
    /** The subcommands, in the order help lists them. */
    private static final Map<String, Supplier<Object>> SUBCOMMANDS = subcommands();

    private final Map<String, String> env;
    private final boolean forwardSignals;
    private final SecretFilter secrets = new SecretFilter();

    TurnstileCommand(Map<String, String> env, boolean forwardSignals) {
        this.env = env;
        this.forwardSignals = forwardSignals;
    }

    /**
     * Runs the tool and exits with its exit code.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        configureLogging(args);
        TurnstileCommand top = new TurnstileCommand(System.getenv(), true);
        // Drivers log through SLF4J and java.util.logging to System.err, sometimes with the URL.
        System.setErr(top.secrets.stream(System.err, java.nio.charset.Charset.defaultCharset()));
        CommandLine cl = commandLine(top, args);
        cl.setErr(new PrintWriter(top.secrets.writer(new PrintWriter(System.err, true)), true));
        System.exit(cl.execute(args));
    }

    /**
     * Runs the tool in this JVM, for tests: the given environment, captured output, and no signal
     * handlers installed.
     */
    static int execute(Map<String, String> env, PrintWriter out, PrintWriter err, String... args) {
        TurnstileCommand top = new TurnstileCommand(env, false);
        CommandLine cl = commandLine(top, args);
        cl.setOut(out);
        cl.setErr(new PrintWriter(top.secrets.writer(err)));
        int code = cl.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    /**
     * The command line for {@code argv}. When the first argument names a subcommand, only that
     * subcommand is added: picocli builds each command's model from its annotations up front,
     * which is a large part of a {@code turnstile run}'s start-up, and no other subcommand can
     * take part in parsing then (the top command has no options but help and version, and no
     * positional parameters). Anything else (no subcommand, a typo, {@code --help}) gets all four.
     */
    static CommandLine commandLine(TurnstileCommand top, String... argv) {
        CommandLine cl = new CommandLine(top);
        Supplier<Object> only = argv.length > 0 ? SUBCOMMANDS.get(argv[0]) : null;
        if (only != null) {
            cl.addSubcommand(only.get());
        } else {
            SUBCOMMANDS.values().forEach(sub -> cl.addSubcommand(sub.get()));
        }
        cl.registerConverter(java.time.Duration.class, new DurationConverter());
        cl.setParameterExceptionHandler((ex, args) -> {
            CommandLine c = ex.getCommandLine();
            c.getErr().println("turnstile: " + ex.getMessage());
            c.getErr().println("Try '" + c.getCommandSpec().qualifiedName() + " --help' for more information.");
            return ExitCodes.USAGE;
        });
        cl.setExecutionExceptionHandler((ex, c, parseResult) -> {
            PrintWriter e = c.getErr();
            if (ex instanceof IllegalArgumentException) {
                e.println("turnstile: " + ex.getMessage());
                return ExitCodes.USAGE;
            }
            if (ex instanceof StoreUnavailableException) {
                e.println("turnstile: store unavailable: " + ex.getMessage());
                return ExitCodes.UNAVAILABLE;
            }
            if (ex instanceof UncheckedIOException) {
                e.println("turnstile: " + ex.getMessage() + ": " + ex.getCause().getMessage());
                return ExitCodes.UNAVAILABLE;
            }
            if (ex instanceof ArithmeticException) {
                e.println("turnstile: a duration or number is too large: " + ex.getMessage());
                return ExitCodes.USAGE;
            }
            e.println("turnstile: unexpected error: " + StoreUrls.redact(String.valueOf(ex)));
            ex.printStackTrace(e);
            return ExitCodes.LEASE_LOST;
        });
        return cl;
    }

    private static Map<String, Supplier<Object>> subcommands() {
        Map<String, Supplier<Object>> subs = new LinkedHashMap<>();
        subs.put("run", RunCommand::new);
        subs.put("locks", LocksCommand::new);
        subs.put("release", ReleaseCommand::new);
        subs.put("schema", SchemaCommand::new);
        return Collections.unmodifiableMap(subs);
    }

    Map<String, String> env() {
        return env;
    }

    SecretFilter secrets() {
        return secrets;
    }

    /**
     * Checks a lock name as the library does, and refuses U+FFFD: it is what the JVM makes of bytes
     * that are not UTF-8, so two different byte strings would become one name.
     */
    static String checkLockName(String name) {
        String nfc = dev.turnstile.Turnstile.checkLockName(name);
        int bad = name.indexOf('\uFFFD');
        if (bad >= 0) {
            throw new IllegalArgumentException("lock name '" + name + "' is not valid UTF-8 (or holds U+FFFD) at index "
                    + bad + ": names are UTF-8 whatever the locale; give the name in UTF-8");
        }
        return nfc;
    }

    boolean forwardSignals() {
        return forwardSignals;
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        err.println("turnstile: give a subcommand: run, locks, release or schema");
        spec.commandLine().usage(err);
        return ExitCodes.USAGE;
    }

    /**
     * SLF4J Simple reads its settings once, so they are set before any logger exists: warnings
     * to stderr, the acquire error that the CLI reports itself turned off, and debug with
     * {@code --verbose}.
     */
    private static void configureLogging(String[] args) {
        boolean verbose = java.util.Arrays.asList(args).contains("--verbose");
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        System.setProperty("org.slf4j.simpleLogger.showThreadName", "false");
        System.setProperty("org.slf4j.simpleLogger.showLogName", "false");
        System.setProperty("org.slf4j.simpleLogger.levelInBrackets", "true");
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.setProperty("org.slf4j.simpleLogger.log.com.zaxxer.hikari", "error");
        // ZooKeeper's client and Curator report every reconnect attempt and retry; Turnstile reports what matters.
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.zookeeper", "error");
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.curator", "off");
        System.setProperty("org.slf4j.simpleLogger.log.dev.turnstile", verbose ? "debug" : "warn");
        if (!verbose) {
            System.setProperty("org.slf4j.simpleLogger.log.dev.turnstile.Turnstile", "off");
        }
    }

    /** Prints the version from the jar's manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = TurnstileCommand.class.getPackage().getImplementationVersion();
            return new String[] {"turnstile " + (v != null ? v : "0.1.0-SNAPSHOT")};
        }
    }
}
