package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

class RecoveryCheckerTest {

    @Test
    void measuresFromTheKillToTheNextAcquireByAnotherWorker() {
        History h = new Histories().acquired(0, 1, 0).harness(Event.KILL, 0, 500).acquired(1, 2, 2600)
                .acquired(2, 3, 4000).build();
        RecoveryChecker.Result r = RecoveryChecker.check(h, Set.of(Event.KILL));
        assertThat(r.recoveries()).hasSize(1);
        assertThat(r.worstMillis()).isEqualTo(2100.0);
        assertThat(r.recoveries().get(0).nextWorker()).isEqualTo(1);
    }

    @Test
    void theVictimsOwnAcquireDoesNotCount() {
        History h = new Histories().acquired(0, 1, 0).harness(Event.PAUSE, 0, 100).acquired(0, 2, 300)
                .acquired(3, 3, 2500).build();
        assertThat(RecoveryChecker.check(h, Set.of(Event.PAUSE)).worstMillis()).isEqualTo(2400.0);
    }

    @Test
    void noAcquireAfterTheFaultIsAnInfiniteRecovery() {
        History h = new Histories().acquired(0, 1, 0).harness(Event.KILL, 0, 500).build();
        RecoveryChecker.Result r = RecoveryChecker.check(h, Set.of(Event.KILL));
        assertThat(r.worstMillis()).isInfinite();
        assertThat(r.recoveries().get(0).nextAcquireAt()).isEqualTo(-1);
    }

    @Test
    void onlyTheAskedFaultsCount() {
        History h = new Histories().acquired(0, 1, 0).harness(Event.DELAY_ON, -1, 100).acquired(1, 2, 5000).build();
        assertThat(RecoveryChecker.check(h, Set.of(Event.KILL)).recoveries()).isEmpty();
    }
}
