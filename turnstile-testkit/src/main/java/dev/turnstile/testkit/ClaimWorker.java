package dev.turnstile.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.claim.Claim;
import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimOutcome;
import dev.turnstile.claim.TaskClaimer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * A claiming worker for tests that run workers in JVMs of their own, whatever the store. A store's
 * test keeps a small {@code main} that builds a {@link TaskClaimer} over its store and calls
 * {@link #run}; the test starts such JVMs with {@link #start} and checks them with {@link #assertEveryStepOnce}
 * and {@link #killAndResume}.
 *
 * <p>Mode {@code work}: claims tasks through {@link #PHASES} until none is left for a while, proving
 * exclusion through the file system (a marker file per task, created with create-new semantics: a
 * second worker on the same task would fail to) and logging every applied step to
 * {@code steps-<pid>} in the work directory. Mode {@code hold}: claims one task in the first phase,
 * prints {@code CLAIMED id version} and waits to be killed.
 */
public final class ClaimWorker {
    /** The phases the workers move every task through; the tasks start in the first. */
    public static final List<String> PHASES = List.of("Releasing", "DeletingRecords", "MarkingDeleted", "Deleted");
    /** The exit code of a worker that saw another worker inside its task. */
    public static final int OVERLAP = 3;

    private ClaimWorker() {}

    /**
     * Runs one worker in this JVM.
     *
     * @param mode {@code work} or {@code hold}
     * @param claimer the claimer over the store under test
     * @param dir the work directory shared by the workers
     * @return the exit code: 0 done, {@link #OVERLAP} if an overlap was seen (never returns in {@code hold})
     * @throws Exception on store or file errors
     */
    public static int run(String mode, TaskClaimer claimer, Path dir) throws Exception {
        if (mode.equals("hold")) {
            Claim claim = claimer.claimNext(ClaimFilter.where("phase", PHASES.get(0))).orElseThrow();
            System.out.println("CLAIMED " + claim.id() + " " + claim.version());
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
        int idle = 0;
        long pid = ProcessHandle.current().pid();
        while (idle < 40) {
            boolean worked = false;
            for (int p = 0; p < PHASES.size() - 1; p++) {
                for (Claim claim : claimer.claim(ClaimFilter.where("phase", PHASES.get(p)), 2)) {
                    worked = true;
                    Path marker = dir.resolve("inside-" + claim.id());
                    try {
                        Files.createFile(marker);
                    } catch (FileAlreadyExistsException e) {
                        System.err.println("overlap on task " + claim.id() + " in phase " + PHASES.get(p));
                        return OVERLAP;
                    }
                    LockSupport.parkNanos(500_000); // the work
                    Files.delete(marker);
                    if (claim.moveTo(PHASES.get(p + 1)) == ClaimOutcome.APPLIED) {
                        Files.writeString(dir.resolve("steps-" + pid), claim.id() + " " + PHASES.get(p) + "\n",
                                StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                    }
                }
            }
            idle = worked ? 0 : idle + 1;
            if (!worked) {
                Thread.sleep(10);
            }
        }
        return 0;
    }

    /**
     * Starts a worker JVM on this JVM's class path.
     *
     * @param main the store's worker main class
     * @param args its arguments
     * @param log where its output goes
     * @return the process
     * @throws IOException if it cannot start
     */
    public static Process start(Class<?> main, List<String> args, Path log) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                "-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectErrorStream(true);
        pb.redirectOutput(log.toFile());
        return pb.start();
    }

    /**
     * Waits for {@code work} workers to finish with exit code 0, then counts the applied steps they
     * logged: every task must have gone through every phase exactly once.
     *
     * @param workers the worker processes
     * @param dir their work directory
     * @param tasks how many tasks there are
     * @throws Exception on file errors; assertion errors carry the workers' logs
     */
    public static void assertEveryStepOnce(List<Process> workers, Path dir, int tasks) throws Exception {
        for (Process p : workers) {
            assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("worker finished").isTrue();
            assertThat(p.exitValue()).as("worker exit code; logs:\n%s", logs(dir)).isZero();
        }
        Map<String, Integer> steps = new HashMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.getFileName().toString().startsWith("steps-")).toList()) {
                for (String line : Files.readAllLines(f)) {
                    steps.merge(line, 1, Integer::sum);
                }
            }
        }
        assertThat(steps).hasSize(tasks * (PHASES.size() - 1));
        assertThat(steps.values()).allMatch(n -> n == 1);
    }

    /**
     * Waits for a {@code hold} worker to print its claim, kills it with SIGKILL, checks that the task
     * stays claimed right after the kill, and claims it again once the lock timeout has passed.
     *
     * @param holder the {@code hold} worker
     * @param log its output
     * @param claimer a claimer over the same store, with the same lock timeout
     * @return the claim that resumed the task: a higher version than the killed worker's
     * @throws Exception on file errors or interruption
     */
    public static Claim killAndResume(Process holder, Path log, TaskClaimer claimer) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.readString(log).contains("CLAIMED") && System.nanoTime() < deadline && holder.isAlive()) {
            Thread.sleep(20);
        }
        String line = Files.readString(log).lines().filter(l -> l.startsWith("CLAIMED")).findFirst()
                .orElseThrow(() -> new AssertionError("the holder never claimed; its log:\n" + readQuietly(log)));
        long killedAt = System.nanoTime();
        holder.destroyForcibly(); // SIGKILL
        assertThat(holder.waitFor(10, TimeUnit.SECONDS)).isTrue();
        long heldVersion = Long.parseLong(line.split(" ", -1)[2]);
        ClaimFilter first = ClaimFilter.where("phase", PHASES.get(0));
        assertThat(claimer.claimNext(first)).as("still claimed right after the kill").isEmpty();
        long timeoutNanos = claimer.lockTimeout().toNanos();
        Claim resumed = null;
        while (resumed == null && System.nanoTime() - killedAt < timeoutNanos * 5) {
            resumed = claimer.claimNext(first).orElse(null);
            Thread.sleep(50);
        }
        assertThat(resumed).as("resumed after the timeout").isNotNull();
        Claim got = Objects.requireNonNull(resumed, "asserted not null above");
        assertThat(got.version()).isGreaterThan(heldVersion);
        return got;
    }

    private static String logs(Path dir) throws IOException {
        StringBuilder b = new StringBuilder();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".log")).toList()) {
                b.append("--- ").append(f.getFileName()).append('\n').append(readQuietly(f));
            }
        }
        return b.toString();
    }

    private static String readQuietly(Path f) {
        try {
            return Files.readString(f);
        } catch (IOException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }
}
