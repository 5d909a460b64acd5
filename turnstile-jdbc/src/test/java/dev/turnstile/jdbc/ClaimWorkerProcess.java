package dev.turnstile.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.claim.Claim;
import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimOutcome;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.TaskClaimer;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * A claiming worker in its own JVM. {@code work}: claims tasks through the phases until none is
 * left, proving exclusion through the file system (a marker file per task, created with
 * create-new semantics: a second worker on the same task would fail to) and logging every applied
 * step. {@code hold}: claims one task, prints {@code CLAIMED id version} and waits to be killed.
 *
 * <p>Exit codes: 0 done, 3 overlap seen, 1 other error.
 */
public final class ClaimWorkerProcess {
    static final List<String> PHASES = List.of("Releasing", "DeletingRecords", "MarkingDeleted", "Deleted");

    private ClaimWorkerProcess() {}

    /**
     * Runs one worker.
     *
     * @param args mode ({@code work} or {@code hold}), JDBC URL, table, work directory, lock timeout ms
     * @throws Exception on errors (exit code 1)
     */
    public static void main(String[] args) throws Exception {
        String mode = args[0];
        String url = args[1];
        ClaimTable table = ClaimTable.builder(args[2]).build();
        Path dir = Path.of(args[3]);
        Duration timeout = Duration.ofMillis(Long.parseLong(args[4]));
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(url, 2);
                TaskClaimer claimer = TaskClaimer.builder(JdbcClaimStore.builder(pool, table).build()).lockTimeout(timeout).build()) {
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
                            System.exit(3);
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
        }
        System.exit(0);
    }

    /**
     * Starts a worker JVM.
     *
     * @param args the worker's arguments
     * @param log where its output goes
     * @return the process
     * @throws java.io.IOException if it cannot start
     */
    static Process start(List<String> args, Path log) throws java.io.IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new java.util.ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                "-cp", System.getProperty("java.class.path"), ClaimWorkerProcess.class.getName()));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectErrorStream(true);
        pb.redirectOutput(log.toFile());
        return pb.start();
    }
}
