package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

class OverlapCheckerTest {

    @Test
    void holdsOneAfterAnotherDoNotOverlap() {
        History h = new Histories().round(0, 1, 0, 1000).round(1, 2, 1000, 2000).round(0, 3, 2100, 3000).build();
        assertThat(OverlapChecker.check(h).count()).isZero();
    }

    @Test
    void aSecondHolderWhileTheFirstStillBelievesIsAnOverlap() {
        History h = new Histories().round(0, 1, 0, 1000).round(1, 2, 600, 1500).build();
        OverlapChecker.Result r = OverlapChecker.check(h);
        assertThat(r.count()).isEqualTo(1);
        assertThat(r.maxMillis()).isEqualTo(400.0);
        assertThat(r.overlaps().get(0).involves(0)).isTrue();
        assertThat(r.overlaps().get(0).toString()).contains("worker 0 (fence 1) and worker 1 (fence 2)");
    }

    @Test
    void aHoldEndsAtTheLossNotificationEvenIfReleaseComesLater() {
        History h = new Histories()
                .acquired(0, 1, 0).lost(0, 1, 1980).release(0, 1, 2600, "ALREADY_EXPIRED")
                .round(1, 2, 2000, 3000).build();
        assertThat(OverlapChecker.check(h).count()).isZero();
    }

    @Test
    void aLateLossNotificationIsAnOverlap() {
        History h = new Histories()
                .acquired(0, 1, 0).lost(0, 1, 2300).release(0, 1, 2600, "ALREADY_EXPIRED")
                .round(1, 2, 2000, 3000).build();
        OverlapChecker.Result r = OverlapChecker.check(h);
        assertThat(r.count()).isEqualTo(1);
        assertThat(r.maxMillis()).isEqualTo(300.0);
    }

    @Test
    void aKilledHolderStopsHoldingAtTheKill() {
        History h = new Histories().acquired(0, 1, 0).harness(Event.KILL, 0, 500).round(1, 2, 2500, 3000).build();
        assertThat(OverlapChecker.check(h).count()).isZero();
        assertThat(h.holds().get(0).killed()).isTrue();
        assertThat(h.holds().get(0).end()).isEqualTo(Histories.ns(500));
    }

    @Test
    void aHolderThatNeverReleasesHoldsToItsLastEvent() {
        History h = new Histories().acquired(0, 1, 0).write(0, 1, Event.ACCEPTED, 5000).round(1, 2, 2500, 3000).build();
        assertThat(OverlapChecker.check(h).count()).isEqualTo(1);
    }

    @Test
    void touchingHoldsAndOneWorkersOwnHoldsAreNoOverlap() {
        History h = new Histories().round(0, 1, 0, 1000).round(1, 2, 1000, 2000).round(1, 3, 2000, 2500).build();
        assertThat(OverlapChecker.check(h).count()).isZero();
    }

    @Test
    void overlapsWithAPausedWorkerCanBeSetApart() {
        History h = new Histories().round(0, 1, 0, 3000).round(1, 2, 2100, 2500).round(2, 3, 2400, 2800).build();
        OverlapChecker.Result r = OverlapChecker.check(h);
        assertThat(r.count()).isEqualTo(3);
        assertThat(r.notInvolving(Set.of(0))).hasSize(1);
    }
}
