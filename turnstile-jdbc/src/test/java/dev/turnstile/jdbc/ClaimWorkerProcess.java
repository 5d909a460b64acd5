package dev.turnstile.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.TaskClaimer;
import dev.turnstile.testkit.ClaimWorker;
import java.nio.file.Path;
import java.time.Duration;

/** A JDBC claiming worker in its own JVM: {@link ClaimWorker} over a JdbcClaimStore. Exit code as {@link ClaimWorker#run}, 1 on errors. */
public final class ClaimWorkerProcess {
    private ClaimWorkerProcess() {}

    /**
     * Runs one worker.
     *
     * @param args mode ({@code work} or {@code hold}), JDBC URL, table, work directory, lock timeout ms
     * @throws Exception on errors (exit code 1)
     */
    public static void main(String[] args) throws Exception {
        int code;
        try (HikariDataSource pool = JdbcClaimContractSupport.pool(args[1], 2);
                TaskClaimer claimer = TaskClaimer.builder(JdbcClaimStore.builder(pool, ClaimTable.builder(args[2]).build()).build())
                        .lockTimeout(Duration.ofMillis(Long.parseLong(args[4]))).build()) {
            code = ClaimWorker.run(args[0], claimer, Path.of(args[3]));
        }
        System.exit(code);
    }
}
