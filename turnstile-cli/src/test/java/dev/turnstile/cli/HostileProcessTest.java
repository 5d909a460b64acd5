package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The hostile cases that need a real process: bin/turnstile started by a shell with a controlled
 * environment ({@code env -i}, LANG unset, as cron runs it), arguments given as raw bytes. The
 * script is the project's own bin/turnstile, run from a copy whose jar is a launcher over this
 * build's class path (so no Maven build happens here).
 */
class HostileProcessTest {
    @TempDir Path dir;
    Path script;
    Path state;

    @BeforeEach
    void installScript() throws IOException {
        Path root = dir.resolve("root");
        Path bin = Files.createDirectories(root.resolve("bin"));
        script = bin.resolve("turnstile");
        Files.copy(Path.of(System.getProperty("user.dir")).resolveSibling("bin").resolve("turnstile"), script);
        script.toFile().setExecutable(true);
        Path target = Files.createDirectories(root.resolve("turnstile-cli").resolve("target"));
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        m.getMainAttributes().put(Attributes.Name.MAIN_CLASS, TurnstileCommand.class.getName());
        m.getMainAttributes().put(Attributes.Name.CLASS_PATH, List.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .stream().map(p -> Path.of(p).toUri().toString()).collect(Collectors.joining(" ")));
        // Outside a git checkout the launcher takes a jar stamped "none" as built: no Maven build.
        Files.writeString(target.resolve("turnstile-all.commit"), "none\n");
        try (OutputStream out = Files.newOutputStream(target.resolve("turnstile-all.jar"));
                JarOutputStream jar = new JarOutputStream(out, m)) {
            jar.flush();
        }
        state = Files.createDirectories(dir.resolve("state"));
    }

    record Result(int code, String stdout, String stderr) {}

    /**
     * Runs {@code bin/turnstile ARGS} through bash under {@code env -i} plus the given variables;
     * {@code args} is bash text, so {@code $'\xff'} passes raw bytes.
     */
    Result sh(List<String> env, String args) throws Exception {
        Process p = start(env, args);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    Process start(List<String> env, String args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("env", "-i",
                "PATH=" + Path.of(System.getProperty("java.home"), "bin") + ":/usr/bin:/bin",
                "HOME=" + state, "XDG_STATE_HOME=" + state));
        cmd.addAll(env);
        cmd.addAll(List.of("bash", "-c", "exec \"$0\" " + args, script.toString()));
        return new ProcessBuilder(cmd).start();
    }

    @Test
    void aNameHeldUnderUtf8IsBusyForCronWithNoLocale() throws Exception {
        Path marker = dir.resolve("holding");
        Process holder = start(List.of("LANG=C.UTF-8"), "run --lock $'\\xc3\\xa9-job' -- sh -c 'touch " + marker + "; sleep 4'");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(marker));
        Result cron = sh(List.of(), "run --lock $'\\xc3\\xa9-job' -- true");
        assertThat(cron.code()).as(cron.stderr()).isEqualTo(75);
        Result posix = sh(List.of("LANG=C", "LC_ALL=POSIX"), "run --lock $'\\xc3\\xa9-job' -- true");
        assertThat(posix.code()).as(posix.stderr()).isEqualTo(75);
        Result list = sh(List.of(), "locks --json");
        assertThat(list.stdout()).contains("\"name\":\"\\u00E9-job\"");
        assertThat(holder.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(holder.exitValue()).isZero();
    }

    @Test
    void namesThatAreNotUtf8AreRefusedNotMerged() throws Exception {
        for (String name : List.of("$'\\xff'", "$'\\xfe'", "$'caf\\xe9'")) {
            Result r = sh(List.of(), "run --lock " + name + " -- true");
            assertThat(r.code()).as(name + ": " + r.stderr()).isEqualTo(64);
            assertThat(r.stderr()).contains("not valid UTF-8");
        }
        assertThat(state.resolve("turnstile")).as("nothing created").doesNotExist();
    }

    @Test
    void theCommandGetsItsArgumentsAsTheCallerWroteThem() throws Exception {
        Path out = dir.resolve("arg");
        Result r = sh(List.of(), "run --lock args -- sh -c 'printf %s \"$1\" > " + out + "' _ $'caf\\xc3\\xa9 \\xe2\\x82\\xac \\xf0\\x9f\\x98\\x80'");
        assertThat(r.code()).as(r.stderr()).isZero();
        assertThat(Files.readAllBytes(out)).isEqualTo("café € 😀".getBytes(StandardCharsets.UTF_8));
        Result bad = sh(List.of(), "run --lock args -- echo $'\\xff'");
        assertThat(bad.code()).as("an argument that is not UTF-8 cannot be passed on unchanged").isEqualTo(64);
    }

    @Test
    void theCommandGetsTheCallersOwnLocaleBack() throws Exception {
        Path out = dir.resolve("env");
        String show = "-- sh -c 'echo \"LC_ALL=${LC_ALL-unset} LANG=${LANG-unset} ORIG=${TURNSTILE_ORIG_LC_ALL-unset}\" > " + out + "'";
        assertThat(sh(List.of(), "run --lock env " + show).code()).isZero();
        assertThat(Files.readString(out).trim()).isEqualTo("LC_ALL=unset LANG=unset ORIG=unset");
        assertThat(sh(List.of("LC_ALL=C", "LANG=de_DE.UTF-8"), "run --lock env " + show).code()).isZero();
        assertThat(Files.readString(out).trim()).isEqualTo("LC_ALL=C LANG=de_DE.UTF-8 ORIG=unset");
        assertThat(sh(List.of("LC_ALL="), "run --lock env " + show).code()).isZero();
        assertThat(Files.readString(out).trim()).as("set but empty stays set").isEqualTo("LC_ALL= LANG=unset ORIG=unset");
    }

    @Test
    void exitCodesAsAShellSeesThem() throws Exception {
        Path marker = dir.resolve("holding");
        Process holder = start(List.of(), "run --lock codes -- sh -c 'touch " + marker + "; sleep 4'");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(marker));
        Result busy = sh(List.of(), "run --lock codes -- true");
        assertThat(busy.code()).isEqualTo(75);
        assertThat(busy.stderr()).contains("is busy");
        Result quiet = sh(List.of(), "run --lock codes --busy-exit 0 -q -- true");
        assertThat(quiet.code()).isZero();
        assertThat(quiet.stdout() + quiet.stderr()).as("nothing for cron to mail").isEmpty();
        Result usage = sh(List.of(), "run --lock codes --ttl 9223372036854775807d -- true");
        assertThat(usage.code()).isEqualTo(64);
        assertThat(usage.stderr()).contains("--ttl").doesNotContain("Exception");
        Result memory = sh(List.of("TURNSTILE_STORE=jdbc:sqlite:"), "run --lock codes -- true");
        assertThat(memory.code()).isEqualTo(64);
        Result own = sh(List.of(), "run --lock other -- sh -c 'exit 7'");
        assertThat(own.code()).isEqualTo(7);
        assertThat(holder.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    /**
     * A caller that closes 0, 1 or 2 ({@code <&-}, {@code >&-}, {@code 2>&-}, as some cron set-ups
     * and daemons do): the command sees /dev/null there. Before: its stdin was the JDK's lib/modules
     * (which a shell command would execute line by line), its stdout that file opened read-only,
     * its stderr the bin/turnstile script.
     */
    @ParameterizedTest
    @ValueSource(strings = {"<&-", ">&-", "2>&-", "<&- 2>&-", "<&- >&- 2>&-"})
    void closedStandardDescriptorsReachTheCommandAsDevNull(String redirect) throws Exception {
        Path seen = dir.resolve("seen");
        Result r = sh(List.of(), "run --lock hostile-fd -- sh -c 'readlink /proc/$$/fd/0 /proc/$$/fd/1 /proc/$$/fd/2 | cat > "
                + seen + "' " + redirect); // a pipe: dash applies a simple command's redirection in the shell itself
        assertThat(r.code()).as(r.stderr()).isZero();
        List<String> fds = Files.readAllLines(seen);
        assertThat(fds).hasSize(3);
        for (int fd = 0; fd <= 2; fd++) {
            boolean closed = switch (fd) {
                case 0 -> redirect.contains("<&-");
                case 1 -> redirect.matches("(.* )?>&-.*");
                default -> redirect.contains("2>&-");
            };
            if (closed) {
                assertThat(fds.get(fd)).as("descriptor " + fd + " with " + redirect).isEqualTo("/dev/null");
            } else {
                assertThat(fds.get(fd)).as("descriptor " + fd + " with " + redirect).startsWith("pipe:");
            }
        }
    }

    /**
     * The jar started directly ({@code java -jar}, no bin/turnstile) with 0, 1 or 2 closed: the JVM
     * has put its own file there before main runs, and Java cannot reopen a descriptor, so turnstile
     * refuses (64, saying why, unless stderr is the closed one) and runs nothing.
     */
    @ParameterizedTest
    @ValueSource(strings = {"<&-", ">&-", "2>&-"})
    void theJarStartedWithAClosedDescriptorRunsNothing(String redirect) throws Exception {
        Path ran = dir.resolve("ran");
        Path jar = script.getParent().resolveSibling("turnstile-cli").resolve("target").resolve("turnstile-all.jar");
        Process p = new ProcessBuilder("env", "-i", "HOME=" + state, "XDG_STATE_HOME=" + state, "bash", "-c",
                "exec \"$0\" -jar \"$1\" run --lock hostile-fd -- touch \"$2\" " + redirect,
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), jar.toString(), ran.toString()).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(err).isEqualTo(64);
        assertThat(ran).doesNotExist();
        if (!redirect.startsWith("2")) {
            assertThat(err).contains("was closed and now holds the JVM's").contains("bin/turnstile");
        }
        Process fine = new ProcessBuilder("env", "-i", "HOME=" + state, "XDG_STATE_HOME=" + state, "bash", "-c",
                "exec \"$0\" -jar \"$1\" run --lock hostile-fd -- touch \"$2\" </dev/null",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), jar.toString(), ran.toString()).start();
        assertThat(fine.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(fine.exitValue()).as(new String(fine.getErrorStream().readAllBytes(), StandardCharsets.UTF_8)).isZero();
        assertThat(ran).exists();
    }
    /**
     * {@code locks}, {@code locks --json} and {@code schema} exist to print: with stdout closed or
     * unwritable they exit 74 saying so. Before: 0, the output lost.
     */
    @ParameterizedTest
    @ValueSource(strings = {">&-", ">/dev/full"})
    void printingCommandsFailWhenTheirOutputGoesNowhere(String redirect) throws Exception {
        for (String command : List.of("locks", "locks --json", "schema")) {
            Result r = sh(List.of(), command + " " + redirect);
            assertThat(r.code()).as(command + " " + redirect + ": " + r.stderr()).isEqualTo(74);
            assertThat(r.stderr()).contains("standard output");
        }
        assertThat(sh(List.of(), "locks >/dev/null").code()).as("discarded on purpose").isZero();
    }
}
