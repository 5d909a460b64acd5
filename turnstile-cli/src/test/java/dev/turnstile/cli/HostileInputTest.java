package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.LockInfo;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The hostile-input suite, in this JVM: bad and unusual command lines and environments against
 * every subcommand, on SQLite, PostgreSQL and MariaDB (Redis where the case is about URLs). Each
 * case is a row: arguments, environment, the exit code and a piece of stderr it must give, and it
 * must leave nothing behind (no file created, no lock held). The cases that need a real process
 * (locale, exit status seen by a shell) are in {@link HostileProcessTest}; the classes of input and
 * their outcomes are listed in docs/hostile-input.md.
 */
class HostileInputTest {
    static final String PG = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres&turnstile.table=hostile_locks";
    static final String MARIADB = "jdbc:mariadb://127.0.0.1:3306/test?user=root&turnstile.table=hostile_locks";
    /** The embedded default: no --store at all. */
    static final String SQLITE = "";
    static final String LOCK = "hostile-job";

    @TempDir Path dir;
    Cli cli;

    @BeforeAll
    static void createTables() {
        for (String url : List.of(PG, MARIADB)) {
            LockStores.factoryFor(url).applySchema(url);
        }
    }

    @AfterAll
    static void nothingLeftHeld() {
        for (String url : List.of(PG, MARIADB)) {
            try (LockStore s = LockStores.open(url)) {
                assertThat(s.heldLocks()).extracting(LockInfo::name).noneMatch(n -> n.startsWith("hostile"));
            }
        }
    }

    @BeforeEach
    void setUp() {
        cli = new Cli(dir);
    }

    /** One row of the table. {@code STORE} in the arguments becomes the store under test. */
    record Case(String what, List<String> args, Map<String, String> env, int exit, String stderr) {
        @Override
        public String toString() {
            return what;
        }
    }

    static Case c(String what, int exit, String stderr, String... args) {
        return new Case(what, List.of(args), Map.of(), exit, stderr);
    }

    static Case env(String what, Map<String, String> env, int exit, String stderr, String... args) {
        return new Case(what, List.of(args), env, exit, stderr);
    }

    /** Cases that mean the same on every store. */
    static List<Case> everyStore() {
        String longName = "x".repeat(256);
        return List.of(
                c("empty name", 64, "lock name is empty", "run", "--lock", "", "--", "true"),
                c("leading space", 64, "white space", "run", "--lock", " " + LOCK, "--", "true"),
                c("trailing space", 64, "white space", "run", "--lock", LOCK + " ", "--", "true"),
                c("trailing no-break space", 64, "white space", "run", "--lock", LOCK + "\u00a0", "--", "true"),
                c("leading ideographic space", 64, "white space", "run", "--lock", "\u3000" + LOCK, "--", "true"),
                c("trailing narrow no-break space", 64, "white space", "run", "--lock", LOCK + "\u202f", "--", "true"),
                c("newline in name", 64, "control character", "run", "--lock", "hostile\njob", "--", "true"),
                c("escape in name", 64, "control character", "run", "--lock", "hostile\u001b[31m", "--", "true"),
                c("NUL in name", 64, "control character", "run", "--lock", "hostile\u0000", "--", "true"),
                c("DEL in name", 64, "control character", "run", "--lock", "hostile\u007f", "--", "true"),
                c("C1 control in name", 64, "control character", "run", "--lock", "hostile\u0085", "--", "true"),
                c("lone surrogate in name", 64, "surrogate", "run", "--lock", "hostile\ud800", "--", "true"),
                c("undecodable name (U+FFFD)", 64, "not valid UTF-8", "run", "--lock", "\ufffd-job", "--", "true"),
                c("name too long", 64, "255", "run", "--lock", longName, "--", "true"),
                c("undecodable argument", 64, "not valid UTF-8", "run", "--lock", LOCK, "--", "echo", "caf\ufffd"),
                c("release: U+FFFD", 64, "not valid UTF-8", "release", "--force", "\ufffd"),
                c("release: trailing no-break space", 64, "white space", "release", "--force", LOCK + "\u00a0"),
                c("release without --force", 64, "--force", "release", LOCK),
                c("ttl zero", 64, "--ttl", "run", "--lock", LOCK, "--ttl", "0s", "--", "true"),
                c("ttl below 10ms", 64, "--ttl", "run", "--lock", LOCK, "--ttl", "5ms", "--", "true"),
                c("ttl negative ISO", 64, "--ttl", "run", "--lock", LOCK, "--ttl", "PT-5S", "--", "true"),
                c("ttl overflows long", 64, "--ttl", "run", "--lock", LOCK, "--ttl", "9223372036854775807d", "--", "true"),
                c("ttl overflows ISO", 64, "--ttl", "run", "--lock", LOCK, "--ttl", "PT9223372036854775807H", "--", "true"),
                c("ttl past 366d", 64, "--ttl", "run", "--lock", LOCK, "--ttl", "367d", "--", "true"),
                c("ttl no unit", 64, "--ttl", "run", "--lock", LOCK, "--ttl", "30", "--", "true"),
                c("ttl unknown unit", 64, "--ttl", "run", "--lock", LOCK, "--ttl", "3w", "--", "true"),
                c("ttl empty", 64, "--ttl", "run", "--lock", LOCK, "--ttl", "", "--", "true"),
                c("ttl digits overflow parse", 64, "--ttl", "run", "--lock", LOCK, "--ttl", "99999999999999999999s", "--", "true"),
                c("wait 100000d names --wait", 64, "--wait", "run", "--lock", LOCK, "--wait", "100000d", "--", "true"),
                c("wait negative ISO", 64, "--wait", "run", "--lock", LOCK, "--wait", "PT-1S", "--", "true"),
                c("wait overflows", 64, "--wait", "run", "--lock", LOCK, "--wait", "106751991167301d", "--", "true"),
                c("at-least 400d", 64, "--at-least", "run", "--lock", LOCK, "--at-least", "400d", "--", "true"),
                c("at-least above ttl", 64, "lockAtLeastFor", "run", "--lock", LOCK, "--ttl", "1m", "--at-least", "2m", "--", "true"),
                c("busy-exit 256", 64, "--busy-exit", "run", "--lock", LOCK, "--busy-exit", "256", "--", "true"),
                c("busy-exit -1", 64, "--busy-exit", "run", "--lock", LOCK, "--busy-exit", "-1", "--", "true"),
                c("busy-exit not a number", 64, "--busy-exit", "run", "--lock", LOCK, "--busy-exit", "zero", "--", "true"),
                c("missing --", 64, "put -- before the command", "run", "--lock", LOCK, "true"),
                c("nothing after --", 64, "give the command", "run", "--lock", LOCK, "--"),
                c("missing --lock", 64, "--lock", "run", "--", "true"),
                c("unknown flag", 64, "Unknown option", "run", "--lock", LOCK, "--frobnicate", "--", "true"),
                c("duplicate --lock", 64, "--lock", "run", "--lock", LOCK, "--lock", "other", "--", "true"),
                c("unknown subcommand", 64, "Unmatched argument", "frobnicate"),
                c("locks with a stray argument", 64, "Unmatched argument", "locks", "extra"));
    }

    /** Store URLs that are wrong in themselves; run on no particular store. */
    static List<Case> urls(Path dir) {
        String missing = dir.resolve("no/such/dir/locks.db").toString();
        String absent = dir.resolve("absent.db").toString();
        return List.of(
                c("sqlite without a path", 64, "one process", "run", "--lock", LOCK, "--store", "jdbc:sqlite:", "--", "true"),
                c("sqlite :memory:", 64, "in-memory", "run", "--lock", LOCK, "--store", "jdbc:sqlite::memory:", "--", "true"),
                c("sqlite shared memory", 64, "in-memory", "run", "--lock", LOCK, "--store",
                        "jdbc:sqlite:file::memory:?cache=shared", "--", "true"),
                c("sqlite mode=memory", 64, "in-memory", "run", "--lock", LOCK, "--store",
                        "jdbc:sqlite:file:x?mode=memory", "--", "true"),
                c("sqlite vfs=memdb", 64, "memory of one process", "run", "--lock", LOCK, "--store",
                        "jdbc:sqlite:file:" + absent + "?vfs=memdb", "--", "true"),
                c("sqlite v%66s=memdb (encoded)", 64, "memory of one process", "run", "--lock", LOCK, "--store",
                        "jdbc:sqlite:file:" + absent + "?v%66s=memdb", "--", "true"),
                c("sqlite open_mode with SQLITE_OPEN_MEMORY", 64, "SQLITE_OPEN_MEMORY", "run", "--lock", LOCK, "--store",
                        "jdbc:sqlite:" + absent + "?open_mode=134", "--", "true"),
                c("sqlite nolock=1", 64, "turns off SQLite's file locking", "run", "--lock", LOCK, "--store",
                        "jdbc:sqlite:file:" + absent + "?nolock=1", "--", "true"),
                c("sqlite vfs=unix-none", 64, "locks nothing", "run", "--lock", LOCK, "--store",
                        "jdbc:sqlite:file:" + absent + "?vfs=unix-none", "--", "true"),
                c("sqlite immutable=1", 64, "immutable=1", "locks", "--store", "jdbc:sqlite:file:" + absent + "?immutable=1"),
                c("sqlite file://localhost/dev/null", 64, "not a regular file", "run", "--lock", LOCK, "--store",
                        "jdbc:sqlite:file://localhost/dev/null", "--", "true"),
                c("sqlite file:/dev/nul%6C", 64, "not a regular file", "schema", "--apply", "--store",
                        "jdbc:sqlite:file:/dev/nul%6C"),
                c("sqlite relative file:rel%2Edb", 64, "relative path", "locks", "--store", "jdbc:sqlite:file:rel%2Edb"),
                c("h2 mem", 64, "in-memory", "run", "--lock", LOCK, "--store", "jdbc:h2:mem:hostile", "--", "true"),
                c("locks on h2 mem", 64, "in-memory", "locks", "--store", "jdbc:h2:mem:hostile"),
                env("unset variable: TURNSTILE_STORE=jdbc:sqlite:", Map.of("TURNSTILE_STORE", "jdbc:sqlite:"), 64,
                        "unset variable", "run", "--lock", LOCK, "--", "true"),
                env("unset variable: TURNSTILE_STORE=jdbc:postgresql://", Map.of("TURNSTILE_STORE", "jdbc:postgresql://"),
                        64, "no host", "run", "--lock", LOCK, "--", "true"),
                c("postgresql no host", 64, "no host", "locks", "--store", "jdbc:postgresql://"),
                c("postgresql no database", 64, "no database", "locks", "--store", "jdbc:postgresql://127.0.0.1:5432/"),
                c("postgresql nothing at all", 64, "no host", "locks", "--store", "jdbc:postgresql:"),
                c("postgresql bad port", 64, "driver accepts", "locks", "--store", "jdbc:postgresql://127.0.0.1:notaport/test"),
                c("mariadb no host", 64, "no host", "run", "--lock", LOCK, "--store", "jdbc:mariadb://", "--", "true"),
                c("mysql no host", 64, "no host", "locks", "--store", "jdbc:mysql:///test"),
                c("mariadb port out of range", 69, "port out of range", "locks", "--store", "jdbc:mariadb://127.0.0.1:99999/test"),
                c("missing jdbc: prefix", 64, "supported schemes", "locks", "--store", "postgresql://127.0.0.1/test"),
                c("unknown scheme", 64, "supported schemes", "locks", "--store", "cassandra://127.0.0.1/test"),
                c("mongodb no database", 64, "names no database", "locks", "--store", "mongodb://127.0.0.1:27017"),
                c("mongodb bad port", 64, "malformed MongoDB URL", "locks", "--store", "mongodb://127.0.0.1:99999/test"),
                c("empty --store", 64, "store URL is empty", "locks", "--store", ""),
                c("blank --store", 64, "store URL is empty", "locks", "--store", "  "),
                c("sql in table option", 64, "plain SQL identifier", "locks", "--store", PG.replace("hostile_locks", "a;drop")),
                c("unknown turnstile option", 64, "unknown option 'turnstile.nope'", "locks", "--store", PG + "&turnstile.nope=1"),
                c("pool size zero", 64, "turnstile.poolSize", "locks", "--store", PG + "&turnstile.poolSize=0"),
                c("connect timeout not a number", 64, "turnstile.connectTimeout", "locks", "--store",
                        PG + "&turnstile.connectTimeout=soon"),
                c("connect timeout with a unit", 0, "", "locks", "--store", PG + "&turnstile.connectTimeout=1s"),
                c("connect timeout 11m", 64, "turnstile.connectTimeout=11m in the store URL is out of range: give 250ms to 10m",
                        "locks", "--store", PG + "&turnstile.connectTimeout=11m"),
                c("createTable not boolean", 64, "turnstile.createTable", "locks", "--store", PG + "&turnstile.createTable=yes"),
                c("locks: sqlite file missing", 69, "no SQLite database", "locks", "--store", "jdbc:sqlite:" + absent),
                c("release: sqlite file missing", 69, "no SQLite database", "release", "--force", LOCK, "--store",
                        "jdbc:sqlite:" + absent),
                c("locks: sqlite directory missing", 69, "no SQLite database", "locks", "--store", "jdbc:sqlite:" + missing),
                c("run: sqlite directory missing", 69, "unavailable", "run", "--lock", LOCK, "--store",
                        "jdbc:sqlite:" + missing, "--", "true"),
                c("run: relative sqlite path", 64, "give the absolute path", "run", "--lock", LOCK, "--store",
                        "jdbc:sqlite:rel.db", "--", "true"),
                c("locks: relative sqlite path (file:)", 64, "relative path", "locks", "--store", "jdbc:sqlite:file:rel.db"),
                c("run: sqlite path is a directory", 64, "is a directory", "run", "--lock", LOCK, "--store",
                        "jdbc:sqlite:" + dir, "--", "true"),
                c("run: sqlite path is /dev/null", 64, "not a regular file", "run", "--lock", LOCK, "--store",
                        "jdbc:sqlite:/dev/null", "--", "true"),
                c("locks: embedded default not created yet", 0, "", "locks"),
                c("release: embedded default not created yet", 1, "was not held", "release", "--force", LOCK),
                // a range's bounds are written in units the store-URL parser takes: the upper bound as shown is accepted
                c("redis connectTimeout=1d (the bound the message gives)", 69, "refused", "locks", "--store",
                        "redis://127.0.0.1:1?turnstile.connectTimeout=1d"),
                c("redis connectTimeout=2d", 64, "turnstile.connectTimeout=2d in the store URL is out of range: give 1ms to 1d",
                        "locks", "--store", "redis://127.0.0.1:1?turnstile.connectTimeout=2d"),
                c("zookeeper sessionTimeout=10m (the bound the message gives)", 69, "refused", "locks", "--store",
                        "zookeeper://127.0.0.1:1?turnstile.sessionTimeout=10m"),
                c("zookeeper sessionTimeout=1.5s", 64, "whole number with ms, s, m, h or d", "locks", "--store",
                        "zookeeper://127.0.0.1:1?turnstile.sessionTimeout=1.5s"),
                c("redis bad port", 64, "port", "locks", "--store", "redis://127.0.0.1:99999"),
                c("redis no host", 64, "host", "locks", "--store", "redis://"),
                // an unset ${PORT}: Lettuce would read it as 6379
                c("redis empty port", 64, "port after '127.0.0.1:' in store URL", "run", "--lock", LOCK, "--store",
                        "redis://127.0.0.1:", "--", "true"),
                c("redis port 0", 64, "port '0'", "locks", "--store", "redis://:pw@127.0.0.1:0"),
                c("redis signed port", 64, "port '+6379'", "locks", "--store", "redis://127.0.0.1:+6379"),
                c("redis non-ASCII port", 64, "is not a port", "locks", "--store", "redis://127.0.0.1:\u0666\u0663\u0667\u0669"),
                c("redlock empty port", 64, "is empty", "locks", "--store", "redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:"),
                c("ambiguous user info (@)", 64, "percent-encode", "locks", "--store",
                        "jdbc:mariadb://root:pa@ss@127.0.0.1:3306/test"),
                c("ambiguous user info (/)", 64, "percent-encode", "locks", "--store",
                        "jdbc:postgresql://u:p/ss@127.0.0.1:5432/test"));
    }

    static Stream<Arguments> storeCases() {
        List<Arguments> out = new ArrayList<>();
        for (String store : List.of(SQLITE, PG, MARIADB)) {
            for (Case k : everyStore()) {
                out.add(Arguments.of(store.isEmpty() ? "sqlite" : store.substring(5, store.indexOf(':', 5)), store, k));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0}: {2}")
    @MethodSource("storeCases")
    void badInputOnEveryStoreIsRefusedAndChangesNothing(String storeName, String store, Case k) throws IOException {
        List<String> args = new ArrayList<>(k.args());
        if (!store.isEmpty() && !args.get(0).equals("frobnicate")) {
            args.add(1, "--store");
            args.add(2, store);
        }
        List<Path> before = listing();
        Cli.Result r = cli.run(k.env(), args.toArray(String[]::new));
        assertThat(r.code()).as(r.all()).isEqualTo(k.exit());
        assertThat(r.err()).as(r.all()).contains(k.stderr()).startsWith("turnstile: ");
        assertThat(listing()).as("no file created").isEqualTo(before);
        if (!store.isEmpty()) {
            try (LockStore s = LockStores.open(store)) {
                assertThat(s.heldLocks()).extracting(LockInfo::name).noneMatch(n -> n.startsWith("hostile"));
            }
        }
    }

    static Stream<Arguments> urlCases() {
        return urls(Path.of("/nonexistent-hostile")).stream().map(Arguments::of);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("urlCases")
    void badStoreUrlsAreRefusedClearlyAndCreateNothing(Case k) throws IOException {
        List<String> args = new ArrayList<>(k.args());
        args.replaceAll(a -> a.replace("/nonexistent-hostile", dir.toString()));
        List<Path> before = listing();
        Cli.Result r = cli.run(k.env(), args.toArray(String[]::new));
        assertThat(r.code()).as(r.all()).isEqualTo(k.exit());
        if (!k.stderr().isEmpty()) {
            assertThat(r.err()).as(r.all()).contains(k.stderr()).startsWith("turnstile: ");
        }
        assertThat(listing()).as("no file created").isEqualTo(before);
    }

    // ---- secrets -----------------------------------------------------------------------------

    static final String URL_SIGNIFICANT = ":/?#[]@!$&'()*+,;=% \"<>\\^`{|}~";

    /** A password with every URL-significant character, between random letters and digits. */
    static String password(long seed) {
        Random r = new Random(seed);
        List<Character> specials = new ArrayList<>();
        for (char ch : URL_SIGNIFICANT.toCharArray()) {
            specials.add(ch);
        }
        java.util.Collections.shuffle(specials, r);
        String alnum = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
        StringBuilder b = new StringBuilder("Pw");
        for (char ch : specials) {
            b.append(alnum.charAt(r.nextInt(alnum.length()))).append(alnum.charAt(r.nextInt(alnum.length()))).append(ch);
        }
        return b.append("Zq").toString();
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** Every scheme and error path: %s is the password, raw (user info) or percent-encoded. */
    static final List<String> SECRET_URLS = List.of(
            "jdbc:postgresql://postgres:%s@127.0.0.1:5432/test?turnstile.table=no_such_hostile_table",
            "jdbc:postgresql://u:%s@127.0.0.1:1/test",
            "jdbc:postgresql://127.0.0.1:1/test?user=u&password=%s",
            "jdbc:postgresql://u:%s@127.0.0.1:notaport/test",
            "jdbc:postgresql://127.0.0.1:5432/test?user=postgres&password=%s&turnstile.bogus=1",
            "jdbc:postgresql://127.0.0.1:5432/test?user=postgres&password=%s&turnstile.table=bad;name",
            "jdbc:mariadb://root:%s@127.0.0.1:3306/test",
            "jdbc:mariadb://127.0.0.1:3306/test?user=root&password=%s",
            "jdbc:mariadb://root:%s@127.0.0.1:bad/test",
            "jdbc:mysql://root:%s@127.0.0.1:3306/test",
            "jdbc:mysql://127.0.0.1:3306/test?user=root&password=%s",
            "jdbc:h2:tcp://127.0.0.1:1/x;USER=sa;PASSWORD=%s",
            "redis://:%s@127.0.0.1:1",
            "redis://default:%s@127.0.0.1:6379",
            "rediss://:%s@127.0.0.1:1",
            "redis-sentinel://:%s@127.0.0.1:1#mymaster",
            "redlock://:%s@127.0.0.1:1,:%s@127.0.0.1:2,:%s@127.0.0.1:3",
            "jdbcx:postgresql://u:%s@127.0.0.1/test");

    static Stream<Arguments> secretCases() {
        List<Arguments> out = new ArrayList<>();
        int i = 0;
        for (String template : SECRET_URLS) {
            for (long seed = 1; seed <= 2; seed++) {
                String pw = password(seed * 31 + i);
                for (boolean encoded : new boolean[] {false, true}) {
                    // a raw password in a query or ;settings cannot even be written unambiguously: only user info
                    if (!encoded && (template.contains("=%s") || template.contains("jdbc:h2"))) {
                        continue;
                    }
                    String url = template.replace("%s", encoded ? enc(pw) : pw);
                    String[][] commands = {{"run", "--lock", "hostile-secret", "--", "true"}, {"locks"},
                        {"release", "--force", "hostile-secret"}, {"schema", "--apply"}};
                    String[] command = commands[i % commands.length];
                    out.add(Arguments.of(String.join(" ", command) + " via " + (i % 2 == 0 ? "--store" : "TURNSTILE_STORE")
                            + ": " + template + (encoded ? " (encoded)" : " (raw)"), url, pw, command, i % 2 == 0));
                    i++;
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("secretCases")
    void noPasswordIsEverPrinted(String what, String url, String pw, String[] command, boolean flag) {
        List<String> args = new ArrayList<>(Arrays.asList(command));
        if (flag) {
            args.add(1, "--store");
            args.add(2, url);
        }
        Cli.Result r = cli.run(flag ? Map.of() : Map.of("TURNSTILE_STORE", url), args.toArray(String[]::new));
        // 0 where nothing could fail: schema of a store that needs none, a Redis that ignores AUTH
        assertThat(r.code()).as(r.all()).isIn(0, 64, 69);
        if (r.code() != 0) {
            assertThat(r.err()).as(r.all()).contains("turnstile: ");
        }
        assertNoPiece(r.all(), pw);
    }

    /** Neither the password, raw or encoded, nor any 6 characters of it in a row. */
    static void assertNoPiece(String output, String pw) {
        assertThat(output).doesNotContain(pw).doesNotContain(enc(pw));
        for (int i = 0; i + 6 <= pw.length(); i++) {
            String piece = pw.substring(i, i + 6);
            assertThat(output).as("a piece of the password: " + piece).doesNotContain(piece);
        }
    }

    // ---- servers that accept and never answer -------------------------------------------------

    /** Accepts every connection and never says a word (a hung server or a black-holing proxy). */
    static final class SilentServer implements AutoCloseable {
        final ServerSocket socket = new ServerSocket(0);
        final List<Socket> accepted = new ArrayList<>();
        final Thread acceptor = new Thread(() -> {
            try {
                while (true) {
                    accepted.add(socket.accept());
                }
            } catch (IOException closed) {
                // done
            }
        });

        SilentServer() throws IOException {
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() {
            return socket.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            socket.close();
            for (Socket s : accepted) {
                s.close();
            }
        }
    }

    static Stream<Arguments> silentServers() {
        return Stream.of(Arguments.of("jdbc:postgresql://127.0.0.1:%d/test?user=postgres"),
                Arguments.of("jdbc:mariadb://127.0.0.1:%d/test?user=root"),
                Arguments.of("jdbc:mysql://127.0.0.1:%d/test?user=root"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("silentServers")
    void aServerThatNeverAnswersCostsOneConnectTimeout(String template) throws IOException {
        try (SilentServer server = new SilentServer()) {
            String url = template.formatted(server.port()) + "&turnstile.connectTimeout=1000";
            long start = System.nanoTime();
            Cli.Result r = cli.run("run", "--lock", LOCK, "--store", url, "--", "true");
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertThat(r.code()).as(r.all()).isEqualTo(69);
            assertThat(ms).as("turnstile.connectTimeout=1000 is honoured").isBetween(900L, 2500L);
        }
    }

    @org.junit.jupiter.api.Test
    void theDefaultConnectTimeoutIsAtMostFiveSeconds() throws IOException {
        try (SilentServer server = new SilentServer()) {
            long start = System.nanoTime();
            Cli.Result r = cli.run("locks", "--store", "jdbc:postgresql://127.0.0.1:" + server.port() + "/test?user=postgres");
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertThat(r.code()).as(r.all()).isEqualTo(69);
            assertThat(ms).isBetween(4500L, 5800L);
        }
    }

    // ---- a SQLite file locked by another process's transaction -------------------------------

    @org.junit.jupiter.api.Test
    void aLockedSqliteFileIsReportedPromptlyAsUnavailableWithinTheWait() throws Exception {
        assertThat(cli.run("run", "--lock", LOCK, "--", "true").code()).isZero();
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(cli.embeddedUrl())) {
            c.createStatement().execute("PRAGMA busy_timeout=0");
            c.createStatement().execute("BEGIN IMMEDIATE");
            c.createStatement().execute("UPDATE turnstile_locks SET owner = owner");
            long start = System.nanoTime();
            Cli.Result r = cli.run("run", "--lock", LOCK, "--", "true");
            long noWait = (System.nanoTime() - start) / 1_000_000;
            assertThat(r.code()).as(r.all()).isEqualTo(69);
            assertThat(r.err()).contains("locked by another process");
            assertThat(noWait).as("--wait 0s: one second of grace, not 20").isLessThan(1800);
            start = System.nanoTime();
            Cli.Result waited = cli.run("run", "--lock", LOCK, "--wait", "2s", "--", "true");
            long withWait = (System.nanoTime() - start) / 1_000_000;
            assertThat(waited.code()).as(waited.all()).isEqualTo(69);
            assertThat(withWait).as("--wait 2s").isBetween(1900L, 3500L);
            c.createStatement().execute("ROLLBACK");
        }
        assertThat(cli.run("run", "--lock", LOCK, "--", "true").code()).as("free again").isZero();
    }

    // ---- a full disk under the SQLite file ----------------------------------------------------

    /**
     * The store on a 256 KiB tmpfs, the disk then filled: each run is refused as unavailable (69,
     * "disk … is full") and its command does not run. Before: every run got fence 1 and ran, as
     * SQLite's failed commit (SQLITE_FULL) was lost. Needs root to mount; skipped where mounting
     * is not permitted, except under CI=true.
     */
    @org.junit.jupiter.api.Test
    void aFullDiskRunsNothingAndSaysTheDiskIsFull() throws Exception {
        Path disk = Files.createDirectories(dir.resolve("small"));
        Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", disk.toString())
                .redirectErrorStream(true).start();
        String why = new String(mount.getInputStream().readAllBytes());
        if (mount.waitFor() != 0) {
            if ("true".equals(System.getenv("CI"))) {
                throw new IllegalStateException("CI runs as root and must be able to mount a tmpfs: " + why);
            }
            org.junit.jupiter.api.Assumptions.assumeTrue(false, "cannot mount a tmpfs here: " + why);
        }
        try {
            String store = "jdbc:sqlite:" + disk.resolve("locks.db");
            Path ran = dir.resolve("ran");
            assertThat(cli.run("run", "--store", store, "--lock", LOCK, "--", "true").code()).isZero();
            Path filler = disk.resolve("filler");
            // another process has the file open (as a running holder of another lock does), so its
            // -wal and -shm files exist: each run connects, and its acquire's commit finds the disk full
            try (java.sql.Connection holder = java.sql.DriverManager.getConnection(store)) {
                holder.createStatement().executeQuery("SELECT count(*) FROM turnstile_locks").close();
                try (java.io.OutputStream out = Files.newOutputStream(filler)) {
                    while (true) {
                        out.write(new byte[512]);
                        out.flush();
                    }
                } catch (IOException full) {
                    assertThat(full.getMessage()).contains("No space left");
                }
                for (int i = 0; i < 2; i++) {
                    Cli.Result r = cli.run("run", "--store", store, "--lock", LOCK, "--", "sh", "-c",
                            "echo $TURNSTILE_FENCE >> " + ran);
                    assertThat(r.code()).as(r.all()).isEqualTo(69);
                    assertThat(r.err()).contains("disk that holds the database is full");
                }
            }
            // nobody has it open: the first connection cannot even create its -shm file
            Cli.Result r = cli.run("run", "--store", store, "--lock", LOCK, "--", "sh", "-c", "echo $TURNSTILE_FENCE >> " + ran);
            assertThat(r.code()).as(r.all()).isEqualTo(69);
            assertThat(r.err()).contains("disk that holds the database is full");
            assertThat(ran).doesNotExist();
            Files.delete(filler);
            Cli.Result after = cli.run("run", "--store", store, "--lock", LOCK, "--", "sh", "-c", "echo $TURNSTILE_FENCE >> " + ran);
            assertThat(after.code()).as(after.all()).isZero();
            assertThat(Files.readString(ran).strip()).as("the refused runs took no fence").isEqualTo("2");
        } finally {
            new ProcessBuilder("umount", "-l", disk.toString()).start().waitFor();
        }
    }

    // ---- output that cannot be written ---------------------------------------------------------

    /** Output to /dev/full (every write fails with ENOSPC): 74 with a message, not 0. */
    @org.junit.jupiter.api.Test
    void printingCommandsFailWhenTheOutputCannotBeWritten() throws Exception {
        assertThat(cli.run("run", "--lock", LOCK, "--", "true").code()).isZero();
        for (String[] args : List.of(new String[] {"locks"}, new String[] {"locks", "--json"}, new String[] {"schema"})) {
            java.io.StringWriter err = new java.io.StringWriter();
            int code;
            try (java.io.PrintWriter full = new java.io.PrintWriter(new java.io.FileOutputStream("/dev/full"))) {
                code = TurnstileCommand.execute(cli.env(), full, new java.io.PrintWriter(err), args);
            }
            assertThat(code).as(String.join(" ", args) + ": " + err).isEqualTo(74);
            assertThat(err.toString()).contains("to standard output failed");
        }
    }

    // ---- output: names from other writers, cron ---------------------------------------------

    static final List<String> ODD_NAMES = List.of("quote\"d", "back\\slash", "new\nline", "esc\u001b[31mred",
            "nul\u0000", "tab\tbed", "emoji \ud83d\ude00", "line\u2028sep", "para\u2029sep", "caf\u00e9",
            "bidi\u202eevil", "{\"json\":1}", "</script>", "del\u007f", "c1\u0085");

    /** Rows written by another client (an older version, a hand-made INSERT), which the CLI must show safely. */
    private void insertOddNames() throws Exception {
        assertThat(cli.run("run", "--lock", "hostile-seed", "--", "true").code()).isZero();
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(cli.embeddedUrl());
                java.sql.PreparedStatement ps = c.prepareStatement("INSERT INTO turnstile_locks"
                        + " (name, owner, token, fence, acquired_at, expires_at) VALUES (?, ?, 't', 1, 0, ?)")) {
            for (String name : ODD_NAMES) {
                ps.setString(1, name);
                ps.setString(2, "owner " + name);
                ps.setLong(3, System.currentTimeMillis() + 600_000);
                ps.executeUpdate();
            }
        }
    }

    @org.junit.jupiter.api.Test
    void locksJsonReadsBackAsTheSameNamesWhateverTheyHold() throws Exception {
        insertOddNames();
        Cli.Result r = cli.run("locks", "--json");
        assertThat(r.code()).as(r.all()).isZero();
        com.fasterxml.jackson.databind.JsonNode array = new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out());
        List<String> names = new ArrayList<>();
        List<String> owners = new ArrayList<>();
        array.forEach(n -> {
            names.add(n.get("name").asText());
            owners.add(n.get("owner").asText());
        });
        assertThat(names).containsAll(ODD_NAMES);
        assertThat(owners).containsAll(ODD_NAMES.stream().map(n -> "owner " + n).toList());
        assertThat(r.out()).as("one lock a line, nothing raw").doesNotContain("\u2028").doesNotContain("\u001b")
                .hasLineCount(ODD_NAMES.size() + 2);
    }

    @org.junit.jupiter.api.Test
    void theLocksTableEscapesWhatCouldBreakItsLinesOrTheTerminal() throws Exception {
        insertOddNames();
        Cli.Result r = cli.run("locks");
        assertThat(r.code()).as(r.all()).isZero();
        assertThat(r.out()).doesNotContain("\u001b").doesNotContain("\u0000").doesNotContain("\u2028")
                .doesNotContain("\u202e").doesNotContain("\u007f").doesNotContain("\u0085")
                .contains("new\\nline").contains("esc\\u001b[31mred").contains("back\\\\slash")
                .contains("caf\u00e9").contains("emoji \ud83d\ude00");
        assertThat(r.out().lines().count()).as("one line per lock plus the header").isEqualTo(ODD_NAMES.size() + 1);
    }

    @org.junit.jupiter.api.Test
    void quietBusyPrintsNothingForCron() throws Exception {
        Path marker = dir.resolve("holding");
        Thread holder = new Thread(() -> cli.run("run", "--lock", LOCK, "--", "sh", "-c", "touch '" + marker + "'; sleep 3"));
        holder.start();
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() -> Files.exists(marker));
        Cli.Result loud = cli.run("run", "--lock", LOCK, "--busy-exit", "0", "--", "true");
        assertThat(loud.code()).isZero();
        assertThat(loud.err()).contains("is busy");
        for (String quiet : List.of("-q", "--quiet-busy")) {
            Cli.Result r = cli.run("run", "--lock", LOCK, "--busy-exit", "0", quiet, "--", "true");
            assertThat(r.code()).isZero();
            assertThat(r.all()).as(quiet).isEmpty();
        }
        Cli.Result quiet75 = cli.run("run", "-q", "--lock", LOCK, "--", "true");
        assertThat(quiet75.code()).isEqualTo(75);
        assertThat(quiet75.all()).isEmpty();
        holder.join();
        Cli.Result error = cli.run("run", "-q", "--lock", LOCK, "--store", "jdbc:postgresql://127.0.0.1:1/test", "--", "true");
        assertThat(error.code()).isEqualTo(69);
        assertThat(error.err()).as("errors are never quiet").contains("unavailable");
    }

    @org.junit.jupiter.api.Test
    void releaseForceSaysWhoAsked() throws Exception {
        Path marker = dir.resolve("holding");
        Thread holder = new Thread(() -> cli.run("run", "--lock", LOCK, "--", "sh", "-c", "touch '" + marker + "'; sleep 2"));
        holder.start();
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() -> Files.exists(marker));
        Cli.Result r = cli.run("release", "--force", LOCK);
        holder.join();
        assertThat(r.code()).as(r.all()).isZero();
        assertThat(r.err()).contains("release --force: lock '" + LOCK + "' freed (held by ").contains(", fence ").contains(") by user '"
                        + System.getProperty("user.name") + "' from host ")
                .contains("(pid " + ProcessHandle.current().pid() + ", parent pid ")
                .contains(" on jdbc:sqlite:");
        Cli.Result again = cli.run("release", "--force", LOCK);
        assertThat(again.code()).isEqualTo(1);
        assertThat(again.err()).contains("was not held by user");
    }

    private List<Path> listing() throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.sorted().toList();
        }
    }
}
