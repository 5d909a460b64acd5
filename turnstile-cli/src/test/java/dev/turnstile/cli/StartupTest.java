package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What keeps `turnstile run` quick to start, and that it changes nothing the user sees. */
class StartupTest {
    @TempDir Path dir;

    private static TurnstileCommand top() {
        return new TurnstileCommand(Map.of(), false);
    }

    @Test
    void aNamedSubcommandIsTheOnlyOneWhoseModelIsBuilt() {
        assertThat(TurnstileCommand.commandLine(top(), "run", "--lock", "x", "--", "true").getSubcommands())
                .containsOnlyKeys("run");
        assertThat(TurnstileCommand.commandLine(top(), "locks", "--json").getSubcommands()).containsOnlyKeys("locks");
    }

    @Test
    void withoutASubcommandAllSixAreThereInHelpOrder() {
        for (String[] args : List.of(new String[0], new String[] {"--help"}, new String[] {"runn", "--lock", "x"})) {
            assertThat(TurnstileCommand.commandLine(top(), args).getSubcommands().keySet())
                    .containsExactly("run", "locks", "release", "prune", "schema", "console");
        }
        Cli.Result help = new Cli(dir).run("--help");
        assertThat(help.code()).isZero();
        assertThat(help.out()).contains("  run ", "  locks ", "  release ", "  prune ", "  schema ", "  console ");
        Cli.Result typo = new Cli(dir).run("runn", "--lock", "x");
        assertThat(typo.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(typo.err()).contains("Unmatched arguments from index 0: 'runn'", "Try 'turnstile --help'");
    }

    @Test
    void aSubcommandsOwnHelpAndErrorsAreUnchanged() {
        Cli cli = new Cli(dir);
        Cli.Result help = cli.run("run", "--help");
        assertThat(help.code()).isZero();
        assertThat(help.out()).startsWith("Usage: turnstile run ").contains("--lock=NAME", "--busy-exit=CODE");
        Cli.Result missing = cli.run("run", "--", "true");
        assertThat(missing.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(missing.err()).contains("Missing required option: '--lock=NAME'", "Try 'turnstile run --help'");
    }

    @Test
    void sqliteLoadsTheExtractedNativeLibraryInsteadOfUnpackingItsOwn() throws Exception {
        Path lib = SqliteNativeLibrary.extract(dir.resolve("native"));
        assertThat(lib).isRegularFile().hasParent(dir.resolve("native"));
        assertThat(SqliteNativeLibrary.extract(dir.resolve("native"))).as("again: replaced in place").isEqualTo(lib);
        try (var listing = Files.list(dir.resolve("native"))) {
            assertThat(listing.toList()).as("no temporary file left behind").containsExactly(lib);
        }

        assertThat(loadedSqliteLibrary(List.of("-Dorg.sqlite.lib.path=" + lib.getParent(),
                "-Dorg.sqlite.lib.name=" + lib.getFileName()))).isEqualTo(lib.toString());
        // Control: left to itself the driver unpacks a copy to a temporary file.
        assertThat(loadedSqliteLibrary(List.of("-Djava.io.tmpdir=" + Files.createDirectories(dir.resolve("tmp")))))
                .startsWith(dir.resolve("tmp").toString());
    }

    /** The path of the SQLite library mapped into a `turnstile run` JVM, as its command sees it (through its guard). */
    private String loadedSqliteLibrary(List<String> jvmOptions) throws Exception {
        Path maps = dir.resolve("maps-" + jvmOptions.hashCode());
        Process run = new Cli(dir).spawn(jvmOptions, Map.of(), "run", "--lock", "startup", "--", "sh", "-c",
                "jvm=$(awk '{print $4}' /proc/$PPID/stat); grep -o '/[^ ]*sqlitejdbc[^ ]*' /proc/$jvm/maps | head -n 1 > '" + maps + "'");
        assertThat(run.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(run.exitValue()).as(Files.readString(dir.resolve("spawned.log"))).isZero();
        return Files.readString(maps).strip();
    }
}
