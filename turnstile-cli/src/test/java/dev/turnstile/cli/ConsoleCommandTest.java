package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;

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
        Cli.Result missing = cli.run("console", "--store", store, "--allow-release", "--token-file", dir.resolve("nope").toString());
        assertThat(missing.code()).isEqualTo(64);
        assertThat(missing.err()).contains("cannot read --token-file").contains("give a readable file");
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
}
