package dev.turnstile.cli;

import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.StoreUrls;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code turnstile}: the command-line tool. Subcommands: run, locks, release, schema, console. */
@Command(name = "turnstile", mixinStandardHelpOptions = true, versionProvider = TurnstileCommand.Version.class,
        description = "Distributed locks for cron and scripts: run a command in exactly one place at a time.",
        footerHeading = "%nStore URLs (--store, or $TURNSTILE_STORE):%n",
        footer = {"  jdbc:sqlite:/absolute/path/locks.db   (default: the file below)",
                "  jdbc:postgresql://host[:5432]/db?user=u",
                "  jdbc:mariadb://host[:3306]/db?user=u   (or jdbc:mysql://)",
                "  redis://[[user]:password@]host[:6379][/db]   (rediss:// for TLS)",
                "  redis-sentinel://host:26379[,host2:26379]#masterName",
                "  redis-cluster://host:7000,host:7001,...",
                "  redlock://h1:6379,h2:6379,h3:6379   (an odd number of Redis)",
                "  zookeeper://[user:password@]h1:2181[,h2:2181][/chroot]",
                "  mongodb://[user:password@]host:27017[,host2]/db   (or mongodb+srv://)",
                "  Options: ?turnstile.NAME=VALUE, e.g. ?turnstile.table=my_locks",
                "  Default store: $XDG_STATE_HOME/turnstile/locks.db",
                "",
                "Exit codes:",
                "  0    the command ran and exited 0 (run), or the subcommand succeeded",
                "  N    the command's own exit code (run)",
                "  1    release --force: the lock was not held",
                "  64   usage error: bad flag, lock name, duration or store URL",
                "  69   store unavailable: unreachable, wrong credentials, or lock table missing",
                "  70   the lease was lost while the command ran; the command was stopped",
                "  71   the guard that stops a command if turnstile dies could not start (perl)",
                "  74   locks, schema: the output could not be written (stdout closed, disk full)",
                "  75   the lock was busy (run; change with --busy-exit)",
                "  126  the command cannot be executed; 127 the command was not found"})
public final class TurnstileCommand implements java.util.concurrent.Callable<Integer> {
    /** The subcommands, in the order help lists them. */
    private static final Map<String, Supplier<Object>> SUBCOMMANDS = subcommands();

    private final Map<String, String> env;
    private final boolean forwardSignals;
    private final SecretFilter secrets = new SecretFilter();
    /** Whether the caller closed stdout (bin/turnstile reopened it on /dev/null and says so). */
    boolean stdoutClosed;

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
        List<String> hijacked = hijackedStandardDescriptors(Path.of("/proc/self"), System.getProperty("java.home"));
        if (!hijacked.isEmpty()) {
            // Nothing may be written to a descriptor that holds one of the JVM's files; stderr only if it is not one.
            if (hijacked.stream().noneMatch(h -> h.startsWith("standard error"))) {
                System.err.println("turnstile: " + String.join("; ", hijacked) + ". A descriptor closed when turnstile "
                        + "started (<&-, >&-, 2>&-) is taken by the next file the JVM opens, and the command would inherit "
                        + "it: start turnstile with 0, 1 and 2 open (</dev/null, >/dev/null, 2>/dev/null), or through "
                        + "bin/turnstile, which reopens closed ones on /dev/null");
            }
            System.exit(ExitCodes.USAGE);
        }
        configureLogging(args);
        TurnstileCommand top = new TurnstileCommand(System.getenv(), true);
        top.stdoutClosed = System.getProperty("turnstile.closedDescriptors", "").contains("1");
        // Drivers log through SLF4J and java.util.logging to System.err, sometimes with the URL.
        System.setErr(top.secrets.stream(System.err, java.nio.charset.Charset.defaultCharset()));
        CommandLine cl = commandLine(top, args);
        cl.setErr(new PrintWriter(top.secrets.writer(new PrintWriter(System.err, true)), true));
        // Straight to descriptor 1, not through System.out: System.out swallows write errors where
        // the PrintWriter picocli would wrap around it cannot see them, so checkError() would miss
        // a failed write (>/dev/full, a full disk). Here the PrintWriter records them itself.
        cl.setOut(new PrintWriter(new java.io.BufferedWriter(new java.io.OutputStreamWriter(
                new java.io.FileOutputStream(java.io.FileDescriptor.out), java.nio.charset.Charset.defaultCharset())), true));
        System.exit(cl.execute(args));
    }

    private static final String[] STANDARD = {"standard input", "standard output", "standard error"};

    /**
     * The standard descriptors that were closed when the JVM started and now hold one of the JVM's
     * own files, found through {@code proc} ({@code /proc/self}; none where it does not exist). The
     * JVM opens its files on the lowest free descriptors, so a closed 0, 1 or 2 comes to hold
     * {@code lib/modules}, a class-data archive or a jar, which a child started with inherited
     * streams would read as its input or get as its output. Held to be the JVM's: a regular file
     * under {@code javaHome}, a {@code .jar}, a {@code .jsa} or {@code .aot} archive; and, for 1
     * and 2, any regular file opened read-only (no caller gives an output that cannot be written).
     *
     * @return one description per such descriptor, e.g. {@code "standard input (descriptor 0) holds
     *     /usr/lib/jvm/…/lib/modules"}; empty when all three are fine
     */
    static List<String> hijackedStandardDescriptors(Path proc, String javaHome) {
        List<String> out = new java.util.ArrayList<>(0);
        for (int fd = 0; fd <= 2; fd++) {
            String target;
            try {
                target = java.nio.file.Files.readSymbolicLink(proc.resolve("fd").resolve(Integer.toString(fd))).toString();
            } catch (java.io.IOException | UnsupportedOperationException e) {
                continue; // no /proc (or this descriptor is closed even now): nothing to judge by
            }
            // terminals, /dev/null, pipes ("pipe:[…]") and sockets are what callers give
            if (!target.startsWith("/") || target.startsWith("/dev/")) {
                continue;
            }
            boolean jvms = (javaHome != null && target.startsWith(javaHome.endsWith("/") ? javaHome : javaHome + "/"))
                    || target.endsWith(".jar") || target.endsWith(".jsa") || target.endsWith(".aot")
                    || (fd > 0 && readOnly(proc, fd) && java.nio.file.Files.isRegularFile(Path.of(target)));
            if (jvms) {
                out.add(STANDARD[fd] + " (descriptor " + fd + ") was closed and now holds the JVM's " + target);
            }
        }
        return out;
    }

    /** {@code fdinfo}'s flags, in octal: the low two bits are the access mode, 0 for read-only. */
    private static boolean readOnly(Path proc, int fd) {
        try {
            for (String line : java.nio.file.Files.readAllLines(proc.resolve("fdinfo").resolve(Integer.toString(fd)))) {
                if (line.startsWith("flags:")) {
                    return (Integer.parseInt(line.substring(6).trim(), 8) & 3) == 0;
                }
            }
        } catch (java.io.IOException | NumberFormatException e) {
            // cannot tell: judge by the path alone
        }
        return false;
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
     * positional parameters). Anything else (no subcommand, a typo, {@code --help}) gets them all.
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
            if (ex instanceof dev.turnstile.StoreSchemaException) {
                // 69 as documented for a missing lock table: the store cannot serve this command as set up
                e.println("turnstile: store unavailable (not set up for Turnstile): " + ex.getMessage());
                return ExitCodes.UNAVAILABLE;
            }
            if (ex instanceof StoreUnavailableException) {
                e.println("turnstile: store unavailable: " + ex.getMessage());
                return ExitCodes.UNAVAILABLE;
            }
            if (ex instanceof UncheckedIOException) {
                // never null: UncheckedIOException's constructor refuses a null cause
                Throwable cause = Objects.requireNonNull(ex.getCause(), "UncheckedIOException without a cause");
                e.println("turnstile: " + ex.getMessage() + ": " + cause.getMessage());
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
        subs.put("prune", PruneCommand::new);
        subs.put("schema", SchemaCommand::new);
        subs.put("console", ConsoleCommand::new);
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
    @SuppressWarnings("NullAway.Init") // picocli sets it before call(); NullAway cannot see that
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        err.println("turnstile: give a subcommand: run, locks, release, schema or console");
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
        // (its ERRORs too: an unknown host gave one stack trace per connect attempt; the store says why in one line)
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.zookeeper", verbose ? "warn" : "off");
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.curator", "off");
        // Lettuce and Netty likewise: a Sentinel that cannot be reached was a second [WARN] line, and
        // a handshake timer that fires after the client shut down (a firewalled Redis) a Netty
        // "Failed to submit a listener notification task" stack trace. The store's error names the cause.
        System.setProperty("org.slf4j.simpleLogger.log.io.lettuce", verbose ? "warn" : "off");
        System.setProperty("org.slf4j.simpleLogger.log.io.netty", verbose ? "warn" : "off");
        System.setProperty("org.slf4j.simpleLogger.log.dev.turnstile", verbose ? "debug" : "warn");
        // turnstile console prints each audit record itself, as release --force does: not twice
        System.setProperty("org.slf4j.simpleLogger.log.dev.turnstile.console.audit", "off");
        if (!verbose) {
            System.setProperty("org.slf4j.simpleLogger.log.dev.turnstile.Turnstile", "off");
        }
    }

    /**
     * Ends a command whose purpose is its output: 74 with a message when that output went nowhere —
     * stdout closed by the caller (bin/turnstile put /dev/null there), or a write that failed
     * ({@code >/dev/full}, a closed pipe, a full disk). A {@link PrintWriter} swallows write errors;
     * {@link PrintWriter#checkError()} flushes and reports them.
     *
     * @param what what was printed, for the message: "the locks", "the schema"
     * @return {@link ExitCodes#OK} or {@link ExitCodes#OUTPUT_FAILED}
     */
    int outputWritten(CommandLine cl, String what) {
        if (stdoutClosed) {
            cl.getErr().println("turnstile: standard output is closed, so " + what + " went nowhere: give it somewhere "
                    + "to go (>/dev/null to discard it on purpose)");
        } else if (cl.getOut().checkError()) {
            cl.getErr().println("turnstile: writing " + what + " to standard output failed (a full disk, a closed pipe or "
                    + "/dev/full): nothing or only part of it was written");
        } else {
            return ExitCodes.OK;
        }
        cl.getErr().flush();
        return ExitCodes.OUTPUT_FAILED;
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
