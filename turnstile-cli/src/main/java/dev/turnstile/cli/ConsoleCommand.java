package dev.turnstile.cli;

import dev.turnstile.Turnstile;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.TaskClaimer;
import dev.turnstile.console.Console;
import dev.turnstile.console.ConsoleServer;
import dev.turnstile.spi.LockStore;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code turnstile console}: the web console for any store, without an application. */
@Command(name = "console", mixinStandardHelpOptions = true,
        description = {"Serve a web console that shows the locks the store holds (name, holder, fence, acquired, expires, "
                + "time left; filtered, refreshing itself) until stopped (Ctrl-C, SIGTERM).",
                "Listens on loopback (127.0.0.1:7433) by default, read-only. With --allow-release it offers force-release "
                        + "behind a confirmation, after a sign-in with the console token; every release is reported on "
                        + "stderr and to syslog like 'release --force', and listed on the console's History page.",
                "The token is $TURNSTILE_CONSOLE_TOKEN, else the first line of --token-file, else a new one printed on "
                        + "stderr at start. Listening beyond loopback needs a token and a sign-in for every page.",
                "Never creates a store: a SQLite path that does not exist is an error."})
// picocli sets the @ParentCommand and @Spec fields before call(); NullAway cannot see that
@SuppressWarnings("NullAway.Init")
final class ConsoleCommand implements Callable<Integer> {
    static final int DEFAULT_PORT = 7433;

    @ParentCommand TurnstileCommand top;
    @Spec CommandSpec spec;
    @Mixin StoreOption store = new StoreOption();

    @Option(names = "--listen", paramLabel = "HOST:PORT",
            description = "Address to listen on: HOST:PORT, [IPv6]:PORT or PORT (on loopback). Default: 127.0.0.1:7433; "
                    + "port 0 takes a free one.")
    @Nullable String listen;

    @Option(names = "--allow-release", description = "Offer force-release (after a sign-in with the console token).")
    boolean allowRelease;

    @Option(names = "--role", paramLabel = "NAME",
            description = "A leadership role (its lock name) to show on the Leadership page: who leads it, which term. "
                    + "Repeatable.")
    java.util.List<String> roles = new java.util.ArrayList<>();

    @Option(names = "--claim-table", paramLabel = "TABLE[:COLUMNS]",
            description = "A task table (a collection on MongoDB) of the store to show on the Claims page: its tasks per "
                    + "phase (free, claimed, overdue) and the stuck ones; with --allow-release a stuck claim can be "
                    + "released. Columns other than the defaults as TABLE:id=COL,phase=COL,locked-at=COL,updated-at=COL,"
                    + "version=COL. SQL stores and MongoDB only. Repeatable.")
    java.util.List<String> claimTables = new java.util.ArrayList<>();

    @Option(names = "--claim-timeout", paramLabel = "DURATION",
            description = "The lock timeout the claim tables' claimers use, which tells a claimed task from an overdue "
                    + "one. Default: 1m (TaskClaimer's default).")
    java.time.Duration claimTimeout = java.time.Duration.ofMinutes(1);

    @Option(names = "--stuck-after", paramLabel = "DURATION",
            description = "How long a claimed or overdue task must go without progress to be listed as stuck. Default: "
                    + "ten claim timeouts, at least 1m.")
    java.time.@Nullable Duration stuckAfter;

    @Option(names = "--public-url", paramLabel = "URL",
            description = "The URL browsers use when the console is reached through a reverse proxy (TLS) or a tunnel "
                    + "on another port, e.g. https://locks.example.com: its host is accepted in Host and its origin in "
                    + "forms' Origin.")
    @Nullable String publicUrl;

    @Option(names = "--token-file", paramLabel = "FILE",
            description = "Read the console token from the first line of FILE (at least 16 characters) when "
                    + "$TURNSTILE_CONSOLE_TOKEN is not set.")
    @Nullable Path tokenFile;

    @Override
    public Integer call() throws InterruptedException {
        java.util.List<String> roleNames = roles.stream().map(TurnstileCommand::checkLockName).distinct().sorted().toList();
        java.util.List<ClaimTable> tables = ClaimTables.parse(claimTables);
        ClaimTables.checkTimes(claimTimeout, stuckAfter);
        if (tables.isEmpty() && (stuckAfter != null || spec.commandLine().getParseResult().hasMatchedOption("--claim-timeout"))) {
            throw new IllegalArgumentException("--claim-timeout and --stuck-after judge the tasks of a claim table: give "
                    + "--claim-table TABLE too");
        }
        InetSocketAddress address = address(listen);
        boolean beyondLoopback = !address.getAddress().isLoopbackAddress();
        String token = null;
        boolean generated = false;
        if (allowRelease || beyondLoopback || tokenFile != null) {
            token = token();
            if (token == null) {
                token = ConsoleServer.newToken();
                generated = true;
            }
        }
        // The JDK server has no time limit on a request by default: a client that sends half a
        // request would hold one of its threads for ever.
        System.setProperty("sun.net.httpserver.maxReqTime", System.getProperty("sun.net.httpserver.maxReqTime", "10"));
        System.setProperty("sun.net.httpserver.maxRspTime", System.getProperty("sun.net.httpserver.maxRspTime", "60"));
        PrintWriter err = spec.commandLine().getErr();
        LockStore s = store.open(top, StoreOption.Use.CONSOLE, java.time.Duration.ZERO);
        if (s == null) {
            throw new IllegalArgumentException("the embedded store " + StoreOption.embeddedFile(top) + " does not exist yet "
                    + "(no 'turnstile run' has used it): give --store, or run a command with 'turnstile run' first");
        }
        java.util.List<TaskClaimer> claimers;
        try {
            claimers = ClaimTables.open(s, tables, claimTimeout);
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        Turnstile turnstile;
        try {
            turnstile = Turnstile.builder(s).build();
        } catch (RuntimeException e) {
            claimers.forEach(TaskClaimer::close);
            s.close();
            throw e;
        }
        Console.Builder consoleBuilder = Console.builder(turnstile).claimers(() -> claimers);
        if (stuckAfter != null) {
            consoleBuilder.stuckAfter(stuckAfter);
        }
        Console console = consoleBuilder
                .actionsEnabled(allowRelease, "start 'turnstile console' with --allow-release to enable force-release.")
                .roles(() -> roleNames)
                .auditListener(rec -> {
                    String line = top.secrets().apply(rec.line());
                    err.println("turnstile: " + line);
                    err.flush();
                    if (rec.freed() && top.forwardSignals()) {
                        ReleaseCommand.syslog(line);
                    }
                })
                .build();
        ConsoleServer running;
        try {
            ConsoleServer.Builder server = ConsoleServer.builder(console).listen(address);
            if (publicUrl != null) {
                server.publicUrl(publicUrl);
            }
            if (token != null) {
                server.token(token);
            }
            running = server.start();
        } catch (RuntimeException e) {
            turnstile.close();
            claimers.forEach(TaskClaimer::close);
            s.close();
            throw e;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            running.close();
            turnstile.close();
            claimers.forEach(TaskClaimer::close);
            s.close();
            stopped.countDown();
        }, "turnstile-console-stop"));
        err.println("turnstile console: serving " + running.url() + " for the " + console.storeLabel() + " store, "
                + (allowRelease ? "force-release enabled (sign in with the token)" : "read-only")
                + (beyondLoopback ? "; beyond loopback: every page needs a sign-in" : ""));
        if (generated) {
            err.println("turnstile console: token (sign in with it; set TURNSTILE_CONSOLE_TOKEN or --token-file to choose "
                    + "one): " + token);
        }
        err.flush();
        stopped.await();
        return ExitCodes.OK;
    }

    /** The token from the environment, else the file; null if neither gives one (then one is made). */
    private @Nullable String token() {
        String env = top.env().get("TURNSTILE_CONSOLE_TOKEN");
        if (env != null) {
            if (env.strip().length() < 16) {
                throw new IllegalArgumentException("TURNSTILE_CONSOLE_TOKEN is " + env.strip().length() + " characters: give "
                        + "at least 16 (or unset it, and the console makes one)");
            }
            return env.strip();
        }
        return tokenFile == null ? null : readTokenFile(tokenFile);
    }

    /** The token on the first line of a file: at least 16 characters, read from its first 4 KiB only. */
    static String readTokenFile(Path tokenFile) {
        if (!Files.isRegularFile(tokenFile)) {
            throw new IllegalArgumentException("--token-file " + tokenFile + " is not a regular file (missing, a directory, "
                    + "a device or a pipe): give a file with the token on its first line");
        }
        String first;
        // the first line only (what follows it is not read, let alone decoded), and at most 4 KiB
        try (java.io.InputStream in = Files.newInputStream(tokenFile)) {
            byte[] head = in.readNBytes(4097);
            int end = 0;
            while (end < head.length && head[end] != '\n') {
                end++;
            }
            if (end > 4096) {
                throw new IllegalArgumentException("--token-file " + tokenFile + ": its first line is longer than 4096 bytes; "
                        + "a token is a few dozen characters: put it alone on the first line");
            }
            first = java.nio.charset.StandardCharsets.UTF_8.newDecoder()
                    .decode(java.nio.ByteBuffer.wrap(head, 0, end)).toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            throw new IllegalArgumentException("--token-file " + tokenFile + ": its first line is not UTF-8 text: put the "
                    + "token on its first line");
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read --token-file " + tokenFile + " (" + e + "): give a readable file "
                    + "with the token on its first line");
        }
        // a byte-order mark is not part of the token (editors on some systems write one)
        String t = first.replaceFirst("^\uFEFF+", "").strip();
        if (t.isEmpty()) {
            throw new IllegalArgumentException("--token-file " + tokenFile + " is empty: put the token on its first line");
        }
        if (t.length() < 16) {
            throw new IllegalArgumentException("--token-file " + tokenFile + " holds a token of " + t.length()
                    + " characters: give at least 16");
        }
        return t;
    }

    /** {@code HOST:PORT}, {@code [v6]:PORT}, or {@code PORT} alone (on loopback). */
    static InetSocketAddress address(@Nullable String listen) {
        if (listen == null) {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), DEFAULT_PORT);
        }
        String host;
        String port;
        if (listen.startsWith("[")) {
            int end = listen.indexOf("]:");
            if (end < 2) {
                throw badListen(listen, "an IPv6 address goes in brackets before the port, e.g. [::1]:7433");
            }
            host = listen.substring(1, end);
            port = listen.substring(end + 2);
        } else if (listen.indexOf(':') >= 0) {
            int colon = listen.lastIndexOf(':');
            host = listen.substring(0, colon);
            port = listen.substring(colon + 1);
            if (host.indexOf(':') >= 0) {
                throw badListen(listen, "put an IPv6 address in brackets, e.g. [::1]:7433");
            }
        } else {
            host = "";
            port = listen;
        }
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw badListen(listen, "the port '" + port + "' is not a number");
        }
        if (p < 0 || p > 65_535) {
            throw badListen(listen, "the port " + p + " is out of range 0-65535");
        }
        if (host.isEmpty()) {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), p);
        }
        if (!host.matches("[A-Za-z0-9.:%_-]{1,253}")) {
            throw badListen(listen, "the host '" + LocksCommand.printable(host) + "' is not a host name or address");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), p);
        } catch (UnknownHostException e) {
            throw badListen(listen, "the host '" + host + "' is not known here");
        }
    }

    private static IllegalArgumentException badListen(String listen, String why) {
        return new IllegalArgumentException("--listen '" + LocksCommand.printable(listen) + "': " + why
                + " (give HOST:PORT, [IPv6]:PORT or PORT, e.g. 127.0.0.1:7433)");
    }
}
