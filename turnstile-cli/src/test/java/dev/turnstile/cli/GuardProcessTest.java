package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command never outlives the lock: {@code turnstile run} JVMs killed, frozen, signalled, and
 * their leases taken away, with the guard process keeping the command in check.
 */
class GuardProcessTest {
    @TempDir Path dir;
    final List<Process> started = new ArrayList<>();
    final List<Long> pids = new ArrayList<>();

    @AfterEach
    void cleanUp() throws Exception {
        for (Process p : started) {
            List<ProcessHandle> below = p.descendants().toList(); // what a failing run may have left
            signal("CONT", p.pid());
            p.destroyForcibly();
            below.forEach(h -> {
                ProcessHandle.of(h.pid()).ifPresent(x -> signal0("CONT", x.pid()));
                h.destroyForcibly();
            });
        }
        pids.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
    }

    private Process spawn(Cli cli, String... args) throws IOException {
        Process p = cli.spawn(Map.of(), args);
        started.add(p);
        return p;
    }

    private static void signal0(String name, long pid) {
        try {
            signal(name, pid);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void signal(String name, long pid) throws Exception {
        new ProcessBuilder("kill", "-" + name, Long.toString(pid)).start().waitFor(5, TimeUnit.SECONDS);
    }

    private long pidIn(Path file) throws IOException {
        long pid = Long.parseLong(Files.readString(file).trim());
        pids.add(pid);
        return pid;
    }

    /** Running, that is: a zombie waiting for its (new) parent to reap it is dead enough. */
    private static boolean alive(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return !stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (IOException gone) {
            return false;
        }
    }

    private String log(Cli cli) throws IOException {
        Path log = cli.stateHome.resolve("spawned.log");
        return Files.exists(log) ? Files.readString(log) : "";
    }

    @Test
    void sigkillOfTurnstileStopsTheCommandAndWhatItStartedWithinASecond() throws Exception {
        Cli cli = new Cli(dir);
        Path shell = dir.resolve("shell.pid");
        Path worker = dir.resolve("worker.pid");
        Process run = spawn(cli, "run", "--lock", "killed", "--ttl", "60s", "--", "sh", "-c",
                "sleep 120 & echo $! > '" + worker + "'; echo $$ > '" + shell + "'; wait");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(shell) && Files.size(shell) > 0);
        long shellPid = pidIn(shell);
        long workerPid = pidIn(worker);

        run.destroyForcibly(); // SIGKILL: the JVM gets no say
        long killedAt = System.nanoTime();
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
                .until(() -> !alive(shellPid) && !alive(workerPid));
        assertThat(Duration.ofNanos(System.nanoTime() - killedAt)).as(log(cli)).isLessThan(Duration.ofMillis(1500));
    }

    @Test
    void aFrozenTurnstileHasItsCommandKilledBeforeTheNextRunnerCanStart() throws Exception {
        Cli cli = new Cli(dir);
        cli.run("locks"); // the embedded database exists before the race
        Path events = dir.resolve("events");
        // A command that ignores SIGTERM: only SIGKILL, by the deadline, can stop it in time.
        Process first = spawn(cli, "run", "--lock", "frozen", "--ttl", "3s", "--", "sh", "-c",
                "trap '' TERM; while true; do echo \"A $(date +%s%N)\" >> '" + events + "'; sleep 0.02; done");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(events));
        signal("STOP", first.pid());
        try {
            Process second = spawn(cli, "run", "--lock", "frozen", "--wait", "20s", "--", "sh", "-c",
                    "echo \"B $(date +%s%N)\" >> '" + events + "'");
            assertThat(second.waitFor(40, TimeUnit.SECONDS)).isTrue();
            assertThat(second.exitValue()).as(log(cli)).isZero();
        } finally {
            signal("CONT", first.pid());
        }
        assertThat(first.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(first.exitValue()).as(log(cli)).isEqualTo(70);
        List<String> lines = Files.readAllLines(events);
        long lastA = lines.stream().filter(l -> l.startsWith("A ")).mapToLong(l -> Long.parseLong(l.substring(2))).max().orElseThrow();
        long startB = lines.stream().filter(l -> l.startsWith("B ")).mapToLong(l -> Long.parseLong(l.substring(2))).min().orElseThrow();
        assertThat(lastA).as("the frozen runner's command was dead before the next one started\n" + log(cli)).isLessThan(startB);
        assertThat(log(cli)).contains("the lease could not be renewed in time");
    }

    @Test
    void sigtermStopsTheWholeTreeBeforeTheLockIsReleased() throws Exception {
        Cli cli = new Cli(dir);
        Path worker = dir.resolve("worker.pid");
        Process run = spawn(cli, "run", "--lock", "termed", "--", "sh", "-c",
                "sleep 120 & echo $! > '" + worker + "'; sleep 120; echo never");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(worker) && Files.size(worker) > 0);
        long workerPid = pidIn(worker);
        run.destroy(); // SIGTERM to turnstile
        assertThat(run.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(alive(workerPid)).as("the command's own child is stopped too").isFalse();
        assertThat(run.exitValue()).as(log(cli)).isEqualTo(128 + 15);
        assertThat(cli.run("run", "--lock", "termed", "--", "true").code()).as("released on the way out").isZero();
    }

    @Test
    void aCommandThatIgnoresSigtermIsKilledAfterTheGrace() throws Exception {
        Cli cli = new Cli(dir);
        Path ready = dir.resolve("ready");
        Process run = spawn(cli, "run", "--lock", "stubborn", "--grace", "1s", "--", "sh", "-c",
                "trap '' TERM; touch '" + ready + "'; while true; do sleep 0.05; done");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(ready));
        long sent = System.nanoTime();
        run.destroy(); // SIGTERM to turnstile, passed on and ignored
        assertThat(run.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - sent)).isGreaterThan(Duration.ofMillis(900));
        assertThat(run.exitValue()).as(log(cli)).isEqualTo(128 + 9);
        assertThat(cli.run("run", "--lock", "stubborn", "--", "true").code()).as("released after the kill").isZero();
    }

    @Test
    void sigtermEndsAWaitForABusyLockAtOnce() throws Exception {
        Cli cli = new Cli(dir);
        Path ready = dir.resolve("ready");
        Process holder = spawn(cli, "run", "--lock", "queued", "--", "sh", "-c", "touch '" + ready + "'; sleep 60");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(ready));
        Process waiter = spawn(cli, "run", "--lock", "queued", "--wait", "10m", "--", "true");
        Thread.sleep(2500); // started and waiting
        long sent = System.nanoTime();
        waiter.destroy();
        assertThat(waiter.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - sent)).isLessThan(Duration.ofSeconds(3));
        assertThat(waiter.exitValue()).as(log(cli)).isEqualTo(128 + 15);
        holder.destroy();
    }

    @Test
    void aGuardThatDiesHasTheJvmKillTheCommand() throws Exception {
        Cli cli = new Cli(dir);
        Path shell = dir.resolve("shell.pid");
        Process run = spawn(cli, "run", "--lock", "orphaned", "--", "sh", "-c",
                "echo $$ > '" + shell + "'; while true; do sleep 0.05; done");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(shell) && Files.size(shell) > 0);
        long shellPid = pidIn(shell);
        ProcessHandle guard = run.toHandle().children().findFirst().orElseThrow();
        guard.destroyForcibly();
        assertThat(run.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(run.exitValue()).as(log(cli)).isEqualTo(70);
        await().atMost(Duration.ofSeconds(5)).until(() -> !alive(shellPid));
        assertThat(log(cli)).contains("the guard process died");
    }

    @Test
    void otherSignalsReachTheCommandAndNeverKillTurnstile() throws Exception {
        Cli cli = new Cli(dir);
        Path got = dir.resolve("got");
        Path ready = dir.resolve("ready");
        Process run = spawn(cli, "run", "--lock", "signalled", "--", "sh", "-c",
                "trap 'echo USR1 >> \"" + got + "\"' USR1; trap 'echo ALRM >> \"" + got + "\"; exit 5' ALRM; "
                        + "touch '" + ready + "'; while true; do sleep 0.05; done");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(ready));
        for (String s : List.of("PIPE", "VTALRM", "XFSZ", "USR1")) {
            signal(s, run.pid());
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(got) && Files.readString(got).contains("USR1"));
        assertThat(run.isAlive()).isTrue();
        signal("ALRM", run.pid());
        assertThat(run.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(run.exitValue()).as(log(cli)).isEqualTo(5);
    }

    @Test
    void sigquitPrintsNoThreadDumpIntoTheCommandsOutput() throws Exception {
        Cli cli = new Cli(dir);
        Path ready = dir.resolve("ready");
        Process run = spawn(cli, "run", "--lock", "quit", "--", "sh", "-c",
                "touch '" + ready + "'; sleep 2; echo done");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(ready));
        signal("QUIT", run.pid());
        assertThat(run.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(run.exitValue()).isZero();
        assertThat(log(cli)).contains("done").doesNotContain("Full thread dump");
    }

    @Test
    void aLeaseTheStoreTakesAwayHasItsCommandKilledAtOnceEvenIfItIgnoresSigterm() throws Exception {
        Cli cli = new Cli(dir);
        Path beats = dir.resolve("beats");
        // Renewals every 3 s. Killed at the refused renewal: within 3 s of the force-release.
        // SIGKILL a grace period after SIGTERM would come at least 4.5 s after it, and SIGKILL by
        // the deadline at least 5.9 s after it.
        Process run = spawn(cli, "run", "--lock", "taken", "--ttl", "9s", "--grace", "4500ms", "--", "sh", "-c",
                "trap '' TERM; while true; do date +%s%N >> '" + beats + "'; sleep 0.02; done");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(beats));
        long freedAt = Instant.now().toEpochMilli();
        assertThat(cli.run("release", "--force", "taken").code()).isZero();
        assertThat(run.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(run.exitValue()).as(log(cli)).isEqualTo(70);
        List<String> lines = Files.readAllLines(beats);
        long lastBeat = Long.parseLong(lines.get(lines.size() - 1)) / 1_000_000;
        assertThat(lastBeat - freedAt).as("ms from the force-release to the command's death").isLessThan(4000);
        assertThat(log(cli)).contains("is lost");
    }

    @Test
    void withoutPerlTheCommandIsNotStartedAndTheLockIsFreed() throws Exception {
        Cli cli = new Cli(dir);
        Path marker = dir.resolve("ran");
        Process run = cli.spawn(Map.of("PATH", dir.resolve("empty").toString()), "run", "--lock", "noguard", "--",
                "/bin/sh", "-c", "touch '" + marker + "'");
        started.add(run);
        assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(run.exitValue()).as(log(cli)).isEqualTo(71);
        assertThat(log(cli)).contains("perl");
        assertThat(marker).doesNotExist();
        try (LockStore store = LockStores.open(cli.embeddedUrl()); Turnstile t = Turnstile.builder(store).build()) {
            assertThat(t.heldLocks()).isEmpty();
        }
    }

    /** A perl on PATH that takes {@code delay} to start (a loaded host), touching {@code marker} first. */
    private Path slowPerl(String delay, Path marker) throws IOException {
        Path bin = Files.createDirectories(dir.resolve("slow-bin"));
        Path perl = bin.resolve("perl");
        Files.writeString(perl, "#!/bin/sh\ntouch '" + marker + "'\nsleep " + delay + "\nexec /usr/bin/perl \"$@\"\n");
        perl.toFile().setExecutable(true);
        return bin;
    }

    @Test
    void aLeaseForceReleasedWhileTheGuardStartsNeverRunsTheCommand() throws Exception {
        Cli cli = new Cli(dir);
        cli.run("locks");
        Path starting = dir.resolve("guard-starting");
        Path ran = dir.resolve("ran");
        Path bin = slowPerl("1.5", starting);
        Process first = cli.spawn(Map.of("PATH", bin + ":/usr/bin:/bin"), "run", "--lock", "late", "--", "touch", ran.toString());
        started.add(first);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10)).until(() -> Files.exists(starting));
        assertThat(cli.run("release", "--force", "late").code()).isZero();
        Cli.Result second = cli.run("run", "--lock", "late", "--", "true");
        assertThat(second.code()).as("the lock was free for another run: " + second.all()).isZero();
        assertThat(first.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(first.exitValue()).as(log(cli)).isEqualTo(70);
        assertThat(ran).as("the command of a lease lost before it started never runs\n" + log(cli)).doesNotExist();
        assertThat(log(cli)).contains("is lost").contains("not started").doesNotContain("its guard has stopped");
    }

    @Test
    void aTurnstileFrozenPastItsDeadlineWhileTheGuardStartsNeverRunsTheCommand() throws Exception {
        Cli cli = new Cli(dir);
        cli.run("locks");
        Path starting = dir.resolve("guard-starting");
        Path ran = dir.resolve("ran");
        Path bin = slowPerl("0.5", starting);
        Process first = cli.spawn(Map.of("PATH", bin + ":/usr/bin:/bin"), "run", "--lock", "paused", "--ttl", "1s", "--",
                "touch", ran.toString());
        started.add(first);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10)).until(() -> Files.exists(starting));
        signal("STOP", first.pid());
        try {
            Cli.Result second = cli.run("run", "--lock", "paused", "--wait", "5s", "--", "true");
            assertThat(second.code()).as("the lease expired: " + second.all()).isZero();
        } finally {
            signal("CONT", first.pid());
        }
        assertThat(first.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(first.exitValue()).as(log(cli)).isEqualTo(70);
        assertThat(ran).as("the command of a lease that ran out before it started never runs\n" + log(cli)).doesNotExist();
        assertThat(log(cli)).contains("not started");
    }

    @Test
    void deadlinesAreAbsoluteOnLinuxWithTimeHiResOrTheSyscallAndRelativeOtherwise() throws Exception {
        Cli cli = new Cli(dir);
        for (String clock : List.of("", "syscall", "relative")) {
            Path out = dir.resolve("env-" + clock);
            Process run = cli.spawn(Map.of("TURNSTILE_GUARD_CLOCK", clock), "run", "--verbose", "--lock", "clock-" + clock, "--",
                    "sh", "-c", "echo ${TURNSTILE_GUARD_CLOCK-unset} > '" + out + "'");
            started.add(run);
            assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(run.exitValue()).as(log(cli)).isZero();
            assertThat(Files.readString(out).trim()).as("the command does not get it").isEqualTo("unset");
        }
        // The JVM takes absolute deadlines only when the guard's CLOCK_MONOTONIC reading lies
        // between its own System.nanoTime() before and after: so both readings agree with Java's.
        assertThat(log(cli).lines().filter(l -> l.contains("deadlines absolute (CLOCK_MONOTONIC shared")).count())
                .as(log(cli)).isEqualTo(2);
        assertThat(log(cli)).contains("deadlines relative").contains("child subreaper");
    }

    @Test
    void descendantsThatLeftTheGroupAndWereOrphanedAreStoppedBeforeTheLockIsFree() throws Exception {
        Cli cli = new Cli(dir);
        for (String setsid : List.of("setsid", "setsid -f")) {
            Path child = dir.resolve("child.pid");
            Files.deleteIfExists(child);
            Process run = spawn(cli, "run", "--lock", "escape", "--grace", "1s", "--", "bash", "-c",
                    setsid + " bash -c 'echo $$ > \"" + child + "\"; exec sleep 120' & sleep 0.5; exit 3");
            assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
            long childPid = pidIn(child);
            assertThat(run.exitValue()).as(log(cli)).isEqualTo(3);
            assertThat(alive(childPid)).as(setsid + ": the orphan is gone when turnstile exits\n" + log(cli)).isFalse();
            assertThat(log(cli)).contains("processes it started still run");
        }
    }

    @Test
    void aFrozenGuardHasTheJvmKillTheCommandWhenTheLeaseIsTakenAway() throws Exception {
        Cli cli = new Cli(dir);
        Path beats = dir.resolve("beats");
        Path orphan = dir.resolve("orphan.pid");
        // Renewals every second: the force-release is seen within one.
        Process run = spawn(cli, "run", "--lock", "frozen-guard", "--ttl", "3s", "--", "bash", "-c",
                "setsid bash -c 'echo $$ > \"" + orphan + "\"; exec sleep 120' & "
                        + "trap '' TERM; while true; do date +%s%N >> '" + beats + "'; sleep 0.02; done");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(beats) && Files.exists(orphan) && Files.size(orphan) > 0);
        long orphanPid = pidIn(orphan);
        ProcessHandle guard = run.toHandle().children().filter(h -> h.info().command().orElse("").contains("perl"))
                .findFirst().orElseThrow();
        pids.add(guard.pid());
        signal("STOP", guard.pid());
        long freedAt = Instant.now().toEpochMilli();
        assertThat(cli.run("release", "--force", "frozen-guard").code()).isZero();
        assertThat(run.waitFor(20, TimeUnit.SECONDS)).as(log(cli)).isTrue();
        assertThat(run.exitValue()).as(log(cli)).isEqualTo(70);
        List<String> lines = Files.readAllLines(beats);
        long lastBeat = Long.parseLong(lines.get(lines.size() - 1)) / 1_000_000;
        assertThat(lastBeat - freedAt).as("ms from the force-release to the command's death\n" + log(cli)).isLessThan(2500);
        assertThat(alive(orphanPid)).as("the orphan the frozen guard had taken in").isFalse();
        assertThat(alive(guard.pid())).as("the guard").isFalse();
        assertThat(log(cli)).contains("did not answer");
    }

    @Test
    void aFrozenGuardHasTheJvmStopTheCommandWhenRenewalsFail() throws Exception {
        Cli cli = new Cli(dir);
        cli.run("locks");
        Path beats = dir.resolve("beats");
        Process run = spawn(cli, "run", "--lock", "frozen-guard-expiry", "--ttl", "3s", "--grace", "1s", "--", "sh", "-c",
                "trap '' TERM; while true; do date +%s%N >> '" + beats + "'; sleep 0.02; done");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(beats));
        ProcessHandle guard = run.toHandle().children().filter(h -> h.info().command().orElse("").contains("perl"))
                .findFirst().orElseThrow();
        pids.add(guard.pid());
        signal("STOP", guard.pid());
        // Renewals fail from now on: another process holds the SQLite file's write lock.
        Process blocker = new ProcessBuilder("sqlite3", cli.embeddedDb().toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("sqlite3.log").toFile()).start();
        started.add(blocker);
        blocker.getOutputStream().write("BEGIN EXCLUSIVE;\nSELECT 'locked';\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        blocker.getOutputStream().flush();
        long blockedAt = Instant.now().toEpochMilli();
        try {
            assertThat(run.waitFor(20, TimeUnit.SECONDS)).as(log(cli)).isTrue();
        } finally {
            blocker.getOutputStream().close();
            blocker.waitFor(5, TimeUnit.SECONDS);
        }
        assertThat(run.exitValue()).as(log(cli)).isEqualTo(70);
        List<String> lines = Files.readAllLines(beats);
        long lastBeat = Long.parseLong(lines.get(lines.size() - 1)) / 1_000_000;
        // The last renewal came at most 1 s before the block: the deadline is at most 3 s after
        // it, and the JVM acts at the deadline minus the grace.
        assertThat(lastBeat - blockedAt).as("ms from the block to the command's death\n" + log(cli)).isLessThan(2500);
        assertThat(alive(guard.pid())).as("the guard").isFalse();
        assertThat(log(cli)).contains("did not answer");
    }

    @Test
    void aLeaseForceReleasedWhileTheCommandRanNeverExitsZero() throws Exception {
        Cli cli = new Cli(dir);
        Path ready = dir.resolve("ready");
        // TTL 60 s: no renewal comes during the run, so only the release finds out.
        Process run = spawn(cli, "run", "--lock", "taken-quietly", "--ttl", "60s", "--", "sh", "-c",
                "touch '" + ready + "'; sleep 1.5");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(ready));
        assertThat(cli.run("release", "--force", "taken-quietly").code()).isZero();
        assertThat(run.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(run.exitValue()).as(log(cli)).isEqualTo(70);
        assertThat(log(cli)).contains("no longer held when the command ended");
    }
}
