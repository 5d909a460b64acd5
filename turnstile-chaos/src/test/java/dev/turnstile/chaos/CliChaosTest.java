package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The CI run of the CLI faults: one round each of `turnstile run` processes SIGSTOPped past their TTL,
 * SIGKILLed and partitioned from the store, on one store of each kind ({@link #CI_CELLS}; ZooKeeper's
 * session shorter than the TTL), and of their command SIGKILLed; no two commands may ever be alive at
 * once. The documented exception (JVM and guard frozen
 * together) runs too, to show that the checker sees what the fence is there for. The other cells run in
 * the full matrix ({@code turnstile-chaos/run.sh --cli}). Report: target/cli-chaos-ci.md.
 */
class CliChaosTest {
    /**
     * The JVM faults run in CI on one store of each kind: the embedded file (SQLite), a SQL server
     * (PostgreSQL: kill and partition; its SIGSTOP cell is the long matrix's, SIGSTOP running in CI on
     * SQLite, Redis and ZooKeeper), Redis (SIGSTOP), and the session store (ZooKeeper). The guard that stops the command
     * is the same for every store; what differs is how the lease ends, and the TTL-only stores left out
     * here (MariaDB, Redlock, MongoDB) end it as PostgreSQL does, and take the same faults at the library
     * level in ChaosSuiteTest.
     */
    private static final List<CliChaos.Cell> CI_CELLS = List.of(
            new CliChaos.Cell("sqlite", "kill-cli"), new CliChaos.Cell("sqlite", "stop-cli"),
            new CliChaos.Cell("sqlite", "kill-command"), new CliChaos.Cell("sqlite", "freeze-both"),
            new CliChaos.Cell("postgresql", "kill-cli"), new CliChaos.Cell("postgresql", "partition-cli"),
            new CliChaos.Cell("redis", "stop-cli"),
            new CliChaos.Cell("zookeeper", "kill-cli"), new CliChaos.Cell("zookeeper", "stop-cli"),
            new CliChaos.Cell("zookeeper", "partition-cli"));

    @Test
    @Timeout(900)
    void noTwoCommandsEverRunAtOnceWhateverHappensToTurnstileOnAnyStore() throws Exception {
        // CI keeps under 30 minutes: the other cells run in the full CLI matrix (turnstile-chaos/run.sh --cli)
        List<CliChaos.Cell> cells = CliChaos.cells(CliChaos.STORES, CliChaos.FAULTS).stream().filter(CI_CELLS::contains).toList();
        assertThat(cells).containsExactlyInAnyOrderElementsOf(CI_CELLS);
        List<CliChaos.Result> results = new ArrayList<>(CliChaos.runAll(cells, 1,
                Path.of("target/cli-chaos-ci"), r -> System.out.println(CliChaos.line(r))));
        Files.writeString(Path.of("target/cli-chaos-ci.md"), CliChaos.table(results, "mvn -pl turnstile-chaos test (CliChaosTest)"));
        assertThat(results).extracting(CliChaos.Result::store).containsAll(List.of("sqlite", "postgresql", "redis", "zookeeper"));
        for (CliChaos.Result r : results) {
            assertThat(r.passed()).as(CliChaos.line(r) + " in " + r.dir()).isTrue();
            if (!r.expectsOverlap()) {
                assertThat(r.log().overlaps()).as(r.store() + " " + r.fault()).isEmpty();
                assertThat(r.log().staleLines()).as(r.store() + " " + r.fault()).isZero();
            }
        }
        CliChaos.Result frozen = results.stream().filter(r -> r.fault().equals("freeze-both")).findFirst().orElseThrow();
        assertThat(frozen.log().overlaps()).as("with JVM and guard frozen, nothing on the host stops the command").isNotEmpty();
    }

    @Test
    void theMatrixRunsTheJvmFaultsEverywhereAndTheRestWhereTheyMeanSomething() {
        List<CliChaos.Cell> cells = CliChaos.cells(List.of("sqlite", "zookeeper"), CliChaos.FAULTS);
        assertThat(cells).containsExactly(
                new CliChaos.Cell("sqlite", "kill-cli"), new CliChaos.Cell("sqlite", "stop-cli"),
                new CliChaos.Cell("sqlite", "kill-command"), new CliChaos.Cell("sqlite", "freeze-both"),
                new CliChaos.Cell("zookeeper", "kill-cli"), new CliChaos.Cell("zookeeper", "stop-cli"),
                new CliChaos.Cell("zookeeper", "partition-cli"));
    }
}
