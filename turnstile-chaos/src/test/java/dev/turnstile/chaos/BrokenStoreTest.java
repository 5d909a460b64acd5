package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Proves the checker bites: the same short pause run on Redis, once through a store whose release
 * ignores the token (frees whoever holds the lock) and once on the real store. The paused holder's
 * late release frees its successor's lock, a third worker takes it, and two live workers hold it
 * at once: the broken run must report overlaps and fail, the real one must pass.
 */
class BrokenStoreTest {
    static final ChaosConfig CONFIG = ChaosConfig.shortRun(Path.of("target/chaos-test"));

    @Test
    @Timeout(180)
    void theCheckerCatchesAReleaseThatIgnoresTheToken() {
        ScenarioResult broken = Scenario.run(new StoreSpec("redis (release ignores token)", StoreSpec.Kind.REDIS,
                BrokenLockStoreFactory.SCHEME), new Fault.PauseHolder(), CONFIG);
        Set<Integer> paused = new TreeSet<>();
        broken.pauses().forEach(p -> paused.add(p.worker()));
        List<OverlapChecker.Overlap> betweenLiveWorkers = broken.overlaps().notInvolving(paused);
        assertThat(betweenLiveWorkers).as("overlaps between workers that were never paused, in " + broken.dir()).isNotEmpty();
        assertThat(broken.passed()).isFalse();
        assertThat(broken.failures()).anySatisfy(f -> assertThat(f).contains("overlapping holds"));

        ScenarioResult real = Scenario.run(StoreSpec.named("redis"), new Fault.PauseHolder(), CONFIG);
        assertThat(real.failures()).as("the real store, in " + real.dir()).isEmpty();
        assertThat(real.passed()).isTrue();
    }
}
