package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code turnstile console}'s options under bad input: each is refused before anything listens or is
 * created, with exit 64 and a message that says what to give instead.
 */
class ConsoleCommandTest {
    @TempDir Path dir;

    @Test
    void refusesListenAddressesThatAreNotHostAndPort() {
        Cli cli = new Cli(dir);
        for (String listen : List.of("bogus", "127.0.0.1:99999", "127.0.0.1:-1", "[::1", "::1:7433", "ho st:80", "", ":",
                "127.0.0.1:", "$(id):80", "<script>:1", "host\u0007:1", "127.0.0.1:7433:1")) {
            Cli.Result r = cli.run("console", "--store", "jdbc:sqlite:" + dir.resolve("x.db"), "--listen", listen);
            assertThat(r.code()).as("%s: %s", listen, r.all()).isEqualTo(64);
            assertThat(r.err()).as(listen).contains("--listen").contains("give HOST:PORT, [IPv6]:PORT or PORT")
                    .doesNotContain("\u0007");
        }
        assertThat(dir.resolve("x.db")).doesNotExist();
    }

    @Test
    void refusesRoleNamesThatAreNotLockNames() {
        Cli cli = new Cli(dir);
        for (String role : List.of("", " padded", "a\u0000b", "x".repeat(256))) {
            Cli.Result r = cli.run("console", "--store", "jdbc:sqlite:" + dir.resolve("x.db"), "--role", role);
            assertThat(r.code()).as("%s: %s", role, r.all()).isEqualTo(64);
            assertThat(r.err()).as(role).contains("lock name");
        }
        assertThat(dir.resolve("x.db")).doesNotExist();
    }

    @Test
    void refusesClaimTablesItCannotShow() {
        Cli cli = new Cli(dir);
        String store = "jdbc:sqlite:" + dir.resolve("claims.db");
        assertThat(cli.run("run", "--store", store + "?turnstile.createTable=true", "--lock", "a", "--", "true").code()).isZero();
        Map<String, String> bad = new java.util.LinkedHashMap<>();
        bad.put("", "--claim-table ''");
        bad.put("tasks;drop table x", "--claim-table 'tasks;drop table x'");
        bad.put("tasks:bogus=col", "'bogus' is not a column role");
        bad.put("tasks:id", "'id' is not COLUMN=NAME");
        bad.put("tasks:id=a,id=b", "'id' is given twice");
        bad.put("tasks:phase=x y", "--claim-table 'tasks:phase=x y'");
        bad.put("tasks:phase=id", "two roles");
        bad.put("tasks:id=\u0007", "\\u0007");
        for (Map.Entry<String, String> e : bad.entrySet()) {
            Cli.Result r = cli.run("console", "--store", store, "--claim-table", e.getKey(), "--listen", "127.0.0.1:0");
            assertThat(r.code()).as("%s: %s", e.getKey(), r.all()).isEqualTo(64);
            assertThat(r.err()).as(e.getKey()).contains(e.getValue()).doesNotContain("\u0007");
        }
        Cli.Result twice = cli.run("console", "--store", store, "--claim-table", "tasks", "--claim-table", "TASKS");
        assertThat(twice.code()).isEqualTo(64);
        assertThat(twice.err()).contains("is given twice");
        Cli.Result timeout = cli.run("console", "--store", store, "--claim-table", "tasks", "--claim-timeout", "0s");
        assertThat(timeout.code()).isEqualTo(64);
        assertThat(timeout.err()).contains("--claim-timeout").contains("1ms to 366d");
        Cli.Result stuck = cli.run("console", "--store", store, "--claim-table", "tasks", "--stuck-after", "10ms");
        assertThat(stuck.code()).isEqualTo(64);
        assertThat(stuck.err()).contains("--stuck-after").contains("1s to 366d");
        for (String option : List.of("--claim-timeout", "--stuck-after")) {
            Cli.Result alone = cli.run("console", "--store", store, option, "5m", "--listen", "127.0.0.1:0");
            assertThat(alone.code()).as(alone.all()).isEqualTo(64);
            assertThat(alone.err()).contains("give --claim-table TABLE too");
        }
        Cli.Result missing = cli.run("console", "--store", store, "--claim-table", "tasks", "--listen", "127.0.0.1:0");
        assertThat(missing.code()).as(missing.all()).isNotZero();
        assertThat(missing.err()).contains("tasks").contains("CREATE TABLE");
        Cli.Result redis = cli.run("console", "--store", RedisRunTest.REDIS, "--claim-table", "tasks", "--listen", "127.0.0.1:0");
        assertThat(redis.code()).as(redis.all()).isEqualTo(64);
        assertThat(redis.err()).contains("task tables live in a SQL database or MongoDB");
    }

    @Test
    void acceptsTheAddressFormsItDocuments() {
        assertThat(ConsoleCommand.address(null).getPort()).isEqualTo(ConsoleCommand.DEFAULT_PORT);
        assertThat(ConsoleCommand.address(null).getAddress().isLoopbackAddress()).isTrue();
        assertThat(ConsoleCommand.address("8080").getAddress().isLoopbackAddress()).isTrue();
        assertThat(ConsoleCommand.address("127.0.0.1:0").getPort()).isZero();
        assertThat(ConsoleCommand.address("[::1]:9000").getAddress().getHostAddress()).contains(":");
        assertThat(ConsoleCommand.address("localhost:9000").getAddress().isLoopbackAddress()).isTrue();
        assertThat(ConsoleCommand.address("0.0.0.0:9000").getAddress().isAnyLocalAddress()).isTrue();
    }

    @Test
    void refusesTokensTooShortToGuardActions() throws Exception {
        Cli cli = new Cli(dir);
        String store = "jdbc:sqlite:" + dir.resolve("x.db");
        Cli.Result env = cli.run(Map.of("TURNSTILE_CONSOLE_TOKEN", "short"), "console", "--store", store, "--allow-release");
        assertThat(env.code()).as(env.all()).isEqualTo(64);
        assertThat(env.err()).contains("TURNSTILE_CONSOLE_TOKEN is 5 characters: give at least 16");
        Path empty = Files.writeString(dir.resolve("empty"), "\n");
        Cli.Result emptyFile = cli.run("console", "--store", store, "--allow-release", "--token-file", empty.toString());
        assertThat(emptyFile.code()).isEqualTo(64);
        assertThat(emptyFile.err()).contains("is empty: put the token on its first line");
        Path fifo = dir.resolve("fifo");
        new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor();
        for (String notAFile : List.of(dir.resolve("nope").toString(), dir.toString(), "/dev/zero", fifo.toString())) {
            Cli.Result r = cli.run("console", "--store", store, "--allow-release", "--token-file", notAFile);
            assertThat(r.code()).as(notAFile).isEqualTo(64);
            assertThat(r.err()).as(notAFile).contains("is not a regular file").contains("give a file with the token");
        }
        Path huge = Files.writeString(dir.resolve("huge"), "y".repeat(20) + "\n" + "x".repeat(10_000_000));
        assertThat(ConsoleCommand.readTokenFile(huge)).as("its first line, without reading the rest").isEqualTo("y".repeat(20));
        Path bom = Files.write(dir.resolve("bom"), "\uFEFFabcdefghijklmnop1234\r\nsecond".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(ConsoleCommand.readTokenFile(bom)).as("a byte-order mark is not part of the token").isEqualTo("abcdefghijklmnop1234");
        Path twoBoms = Files.write(dir.resolve("boms"), "\uFEFF\uFEFFabcdefghijklmnop1234".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(ConsoleCommand.readTokenFile(twoBoms)).isEqualTo("abcdefghijklmnop1234");
        byte[] tail = {'\n', (byte) 0xff, (byte) 0xfe};
        Path binaryAfter = dir.resolve("binary-after");
        Files.write(binaryAfter, "abcdefghijklmnop1234".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        Files.write(binaryAfter, tail, java.nio.file.StandardOpenOption.APPEND);
        assertThat(ConsoleCommand.readTokenFile(binaryAfter)).as("only the first line is decoded").isEqualTo("abcdefghijklmnop1234");
        Path longLine = Files.writeString(dir.resolve("long"), "z".repeat(5000));
        assertThatThrownBy(() -> ConsoleCommand.readTokenFile(longLine)).hasMessageContaining("longer than 4096 bytes");
        String pub = "jdbc:sqlite:" + dir.resolve("pub.db");
        assertThat(cli.run("run", "--store", pub + "?turnstile.createTable=true", "--lock", "a", "--", "true").code()).isZero();
        for (String url : List.of("ftp://x", "https://u:p@x", "https://x/path", "not a url")) {
            Cli.Result r = cli.run("console", "--store", pub, "--public-url", url, "--listen", "127.0.0.1:0");
            assertThat(r.code()).as("%s: %s", url, r.all()).isEqualTo(64);
            assertThat(r.err()).contains("is not an http or https URL of a host");
        }
        Path binary = Files.write(dir.resolve("binary"), new byte[] {(byte) 0xff, (byte) 0xfe, 0, 1});
        Cli.Result notText = cli.run("console", "--store", store, "--allow-release", "--token-file", binary.toString());
        assertThat(notText.code()).as(notText.all()).isEqualTo(64);
        Path shortFile = Files.writeString(dir.resolve("short"), "abc\n");
        Cli.Result tooShort = cli.run("console", "--store", store, "--allow-release", "--token-file", shortFile.toString());
        assertThat(tooShort.code()).isEqualTo(64);
        assertThat(tooShort.err()).contains("holds a token of 3 characters: give at least 16");
        assertThat(dir.resolve("x.db")).doesNotExist();
    }

    @Test
    void neverCreatesAStore() {
        Cli cli = new Cli(dir);
        Cli.Result embedded = cli.run("console");
        assertThat(embedded.code()).as(embedded.all()).isEqualTo(64);
        assertThat(embedded.err()).contains("does not exist yet").contains("give --store");
        assertThat(cli.embeddedDb()).doesNotExist();
        assertThat(cli.embeddedDb().getParent()).doesNotExist();
        Cli.Result path = cli.run("console", "--store", "jdbc:sqlite:" + dir.resolve("absent.db"));
        assertThat(path.code()).as(path.all()).isNotZero();
        assertThat(dir.resolve("absent.db")).doesNotExist();
    }

    @Test
    void aPortInUseIsSaidPlainly() throws Exception {
        Cli cli = new Cli(dir);
        cli.run("run", "--store", "jdbc:sqlite:" + dir.resolve("x.db") + "?turnstile.createTable=true", "--lock", "a", "--", "true");
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Cli.Result r = cli.run("console", "--store", "jdbc:sqlite:" + dir.resolve("x.db"), "--listen",
                    "127.0.0.1:" + taken.getLocalPort());
            assertThat(r.code()).as(r.all()).isEqualTo(69);
            assertThat(r.err()).contains("cannot listen on").contains(Integer.toString(taken.getLocalPort()));
        }
    }

    /**
     * {@code release --force} lists the locks only to write whose holding it cut: one entry the
     * store cannot read back (a fence too large for a long, written by something else) must not stop
     * the release of another lock.
     */
    @Test
    void releaseForceFreesALockWhenTheListingFails() throws Exception {
        String prefix = "cli-bad-" + java.util.UUID.randomUUID().toString().substring(0, 8) + ":";
        String url = RedisRunTest.REDIS + "?turnstile.prefix=" + prefix;
        try (dev.turnstile.spi.LockStore store = dev.turnstile.spi.LockStores.open(url);
                dev.turnstile.Turnstile t = dev.turnstile.Turnstile.builder(store).build()) {
            dev.turnstile.Lease lease = t.tryAcquire("victim", dev.turnstile.LockOptions.lockAtMostFor(java.time.Duration.ofMinutes(1)))
                    .orElseThrow();
            Process set = new ProcessBuilder("redis-cli", "-h", "127.0.0.1", "-p", "6379", "set", prefix + "{bigfence}",
                    "token=x fence=99999999999999999999 acquired_at=1 expires_at=9999999999999 owner=o").start();
            assertThat(set.waitFor()).isZero();
            try {
                Cli.Result r = new Cli(dir).run("release", "--force", "--store", url, "victim");
                assertThat(r.code()).as(r.all()).isZero();
                assertThat(r.err()).contains("cannot tell who held 'victim'").contains("release --force: lock 'victim' freed");
                try (dev.turnstile.Turnstile other = dev.turnstile.Turnstile.builder(store).build()) {
                    assertThat(other.tryAcquire("victim")).as("freed in the store: another client takes it").isPresent();
                }
                assertThat(lease.fence()).isPositive();
            } finally {
                new ProcessBuilder("redis-cli", "-h", "127.0.0.1", "-p", "6379", "del", prefix + "{bigfence}").start().waitFor();
            }
        }
    }
}
