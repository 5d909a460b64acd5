package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Proves the checker bites: a short pause run on Redis through a store whose release ignores the
 * token (frees whoever holds the lock). The paused holder's late release frees its successor's lock,
 * a third worker takes it, and two live workers hold it at once: the run must report overlaps and
 * fail. The same run on the real store, which must pass, is ChaosSuiteTest's redis × pause cell.
 */
class BrokenStoreTest {
    static final ChaosConfig CONFIG = ChaosConfig.shortRun(Path.of("target/chaos-test"));

    @Test
    @Timeout(300)
    void theCheckerCatchesAReleaseThatIgnoresTheToken() {
        // The overlap needs a paused holder's late release to land while its successor holds and a
        // third worker to take the lock meanwhile: likely in one short run, not certain; up to three.
        ScenarioResult broken = null;
        List<OverlapChecker.Overlap> betweenLiveWorkers = List.of();
        for (int run = 0; run < 3 && betweenLiveWorkers.isEmpty(); run++) {
            broken = Scenario.run(new StoreSpec("redis (release ignores token)", StoreSpec.Kind.REDIS,
                    BrokenLockStoreFactory.SCHEME), new Fault.PauseHolder(), CONFIG);
            Set<Integer> paused = new TreeSet<>();
            broken.pauses().forEach(p -> paused.add(p.worker()));
            betweenLiveWorkers = broken.overlaps().notInvolving(paused);
        }
        assertThat(betweenLiveWorkers).as("overlaps between workers that were never paused, in " + broken.dir()).isNotEmpty();
        assertThat(broken.passed()).isFalse();
        assertThat(broken.failures()).anySatisfy(f -> assertThat(f).contains("overlapping holds"));
    }
}
