package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CLI as cron runs it: separate JVMs racing, killed and signalled. */
class RunProcessTest {
    @TempDir Path dir;

    @Test
    void twentyConcurrentRunsOnOneNameNeverOverlap() throws Exception {
        Cli cli = new Cli(dir);
        cli.run("run", "--lock", "warm-up", "--", "true"); // creates the embedded database once, outside the race ("locks" never creates one)
        Path work = Files.createDirectories(dir.resolve("work"));
        String section = "mkdir '" + work + "/inside' || exit 99; echo $TURNSTILE_FENCE >> '" + work
                + "/fences'; sleep 0.05; rmdir '" + work + "/inside'";
        List<Process> runs = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            runs.add(cli.spawn(Map.of(), "run", "--lock", "race", "--wait", "180s", "--", "sh", "-c", section));
        }
        for (Process p : runs) {
            assertThat(p.waitFor(240, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(Files.readString(dir.resolve("spawned.log"))).isZero();
        }
        List<Long> fences = Files.readAllLines(work.resolve("fences")).stream().map(Long::parseLong).toList();
        assertThat(fences).hasSize(20).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void aKilledHolderFreesTheLockAfterItsTtl() throws Exception {
        Cli cli = new Cli(dir);
        Path marker = dir.resolve("started");
        Process holder = cli.spawn(Map.of(), "run", "--lock", "cron-job", "--ttl", "3s", "--",
                "sh", "-c", "touch '" + marker + "'; exec sleep 60");
        List<ProcessHandle> orphans = new ArrayList<>();
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(marker));
            orphans.addAll(holder.descendants().toList());
            holder.destroyForcibly(); // SIGKILL: no release, no goodbye
            holder.waitFor();
            long killedAt = System.nanoTime();
            assertThat(cli.run("run", "--lock", "cron-job", "--", "true").code()).as("still held right after").isEqualTo(75);
            Cli.Result next = cli.run("run", "--lock", "cron-job", "--wait", "20s", "--", "true");
            Duration recovery = Duration.ofNanos(System.nanoTime() - killedAt);
            assertThat(next.code()).as(next.all()).isZero();
            assertThat(recovery).as("freed by TTL, not before").isGreaterThan(Duration.ofMillis(1500))
                    .isLessThan(Duration.ofSeconds(3 + 1 + 2));
        } finally {
            orphans.forEach(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void sigtermIsForwardedAndTheCommandsExitCodeReturned() throws Exception {
        Cli cli = new Cli(dir);
        Path marker = dir.resolve("trapping");
        Process run = cli.spawn(Map.of(), "run", "--lock", "signals", "--", "sh", "-c",
                "trap 'exit 42' TERM; touch '" + marker + "'; while true; do sleep 0.1; done");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(marker));
        run.destroy(); // SIGTERM to turnstile
        assertThat(run.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(run.exitValue()).as(Files.readString(dir.resolve("spawned.log"))).isEqualTo(42);
        assertThat(cli.run("run", "--lock", "signals", "--", "true").code()).as("released on the way out").isZero();
    }

    @Test
    void theStoreComesFromTurnstileStoreAndIsHiddenFromTheCommand() throws Exception {
        Cli cli = new Cli(dir);
        Path db = dir.resolve("elsewhere.db");
        Path out = dir.resolve("seen");
        Process run = cli.spawn(Map.of("TURNSTILE_STORE", "jdbc:sqlite:" + db), "run", "--lock", "env", "--",
                "sh", "-c", "echo ${TURNSTILE_STORE:-unset} > '" + out + "'");
        assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(run.exitValue()).isZero();
        assertThat(Files.readString(out).trim()).isEqualTo("unset");
        assertThat(db).exists();
        assertThat(cli.embeddedDb()).doesNotExist();
    }

    /** A command name of 100 000 bytes that cannot run is named in a line of bounded length (an attack saw 131 kB). */
    @Test
    void aHugeCommandNameThatCannotRunIsShownShortened() throws Exception {
        Cli cli = new Cli(dir);
        String huge = "b".repeat(100_000);
        Process run = cli.spawn(Map.of(), "run", "--lock", "huge-name", "--", huge);
        assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
        String log = Files.readString(dir.resolve("spawned.log"));
        assertThat(run.exitValue()).as(log.length() > 2000 ? log.substring(0, 2000) : log).isEqualTo(126); // ENAMETOOLONG
        assertThat(log).contains("cannot run 'bbbb").contains("... (100000 bytes)': File name too long");
        assertThat(log.length()).as("the whole output").isLessThan(2_000);
    }
}
