package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The CI chaos run: every store this machine kind has (SQLite, PostgreSQL, MariaDB, Redis, Redlock, Mongo,
 * ZooKeeper) under the holder faults (SIGKILL, SIGSTOP past its TTL, partitioned from the store), and a
 * three-server ZooKeeper ensemble losing its leader, one round each with the long run's spells
 * ({@link ChaosConfig#ciRun}), checked against the pass criteria. The store faults (a restart of
 * PostgreSQL, Redis, Mongo and ZooKeeper, a SIGSTOP of the Mongo and ZooKeeper servers) run in the long
 * run ({@code turnstile-chaos/run.sh --long}, 20 rounds each), not here: CI stays under 30 minutes.
 * Writes its report to {@code target/chaos-ci/reliability.md}.
 *
 * <p>{@code -Dturnstile.chaos.stores=zookeeper,zookeeper-ensemble} (comma-separated store names) runs only
 * those stores' cells.
 */
class ChaosSuiteTest {
    /** The faults every store runs (where they apply). */
    private static final List<String> FAULTS = List.of("kill", "pause", "partition");
    /** Stores outside StoreSpec.ALL that CI runs, each with only these faults. */
    private static final Map<String, List<String>> EXTRA_CELLS = Map.of("zookeeper-ensemble", List.of("leader-loss"));
    /** The cells that must have run, by store. */
    private static final Map<String, List<String>> EXPECTED = Map.of(
            "sqlite", List.of("kill", "pause"),
            "postgresql", List.of("kill", "pause", "partition"),
            "mariadb", List.of("kill", "pause", "partition"),
            "redis", List.of("kill", "pause", "partition"),
            "redlock", List.of("kill", "pause", "partition"),
            "mongo", List.of("kill", "pause", "partition"),
            "zookeeper", List.of("kill", "pause", "partition"),
            "zookeeper-ensemble", List.of("leader-loss"));

    /** The stores to run: {@code -Dturnstile.chaos.stores}, else StoreSpec.ALL and the ensemble. */
    static List<String> stores() {
        String chosen = System.getProperty("turnstile.chaos.stores", "");
        if (chosen.isBlank()) {
            List<String> all = new ArrayList<>(StoreSpec.ALL);
            all.addAll(EXTRA_CELLS.keySet());
            return all;
        }
        // canonical names, so that aliases (pg, zk) find their expected cells
        return Arrays.stream(chosen.split(",")).map(String::trim).filter(n -> !n.isEmpty()).map(n -> StoreSpec.named(n).name())
                .toList();
    }

    @Test
    @Timeout(900)
    void theShortRunMeetsThePassCriteria() {
        ChaosConfig config = ChaosConfig.ciRun(Path.of("target/chaos-ci/work"));
        List<String> stores = stores();
        List<ScenarioResult> results = new ArrayList<>(ChaosRun.runMatrix(
                stores.stream().filter(n -> !EXTRA_CELLS.containsKey(n)).toList(), FAULTS, config, true));
        for (String extra : stores.stream().filter(EXTRA_CELLS::containsKey).toList()) {
            results.addAll(ChaosRun.runMatrix(List.of(extra), EXTRA_CELLS.get(extra), config, true));
        }
        Report.write(Path.of("target/chaos-ci/reliability.md"), results, "mvn -pl turnstile-chaos test (ChaosSuiteTest)",
                "ci", config);

        List<String> expected = stores.stream().filter(EXPECTED::containsKey)
                .flatMap(n -> EXPECTED.get(n).stream().map(f -> n + "×" + f)).toList();
        assertThat(results).extracting(r -> r.store() + "×" + r.fault()).containsAll(expected);
        String failures = results.stream().filter(r -> !r.passed())
                .map(r -> r.store() + " × " + r.fault() + " (" + r.dir() + "): " + r.failures())
                .collect(Collectors.joining("\n"));
        assertThat(failures).as("scenarios that broke a pass criterion (report in target/chaos-ci/reliability.md)").isEmpty();
        for (ScenarioResult r : results) {
            assertThat(r.fences().outOfOrder()).as(r.store() + "×" + r.fault() + ": fenced writes out of order").isEmpty();
            assertThat(r.losses().silent()).as(r.store() + "×" + r.fault() + ": silent losses").isEmpty();
            if (r.fault().equals("kill") || r.fault().equals("partition")) {
                if (!r.store().equals("redlock")) {
                    assertThat(r.overlaps().count()).as(r.store() + "×" + r.fault() + ": overlaps").isZero();
                }
                assertThat(r.recovery().worstMillis()).as(r.store() + "×" + r.fault() + ": recovery")
                        .isLessThanOrEqualTo(config.recoveryLimit().toMillis());
            }
        }
    }
}
