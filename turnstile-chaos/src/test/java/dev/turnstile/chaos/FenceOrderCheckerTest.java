package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class FenceOrderCheckerTest {

    @Test
    void increasingFencesAndTwoWritesPerHolderAreInOrder() {
        History h = new Histories().round(0, 1, 0, 1000).round(1, 2, 1000, 2000).round(0, 5, 2000, 3000)
                .write(1, 2, Event.REJECTED, 2500).write(2, 6, Event.FAILED, 3500).build();
        FenceOrderChecker.Result r = FenceOrderChecker.check(h);
        assertThat(r.outOfOrder()).isEmpty();
        assertThat(r.regressions()).isEmpty();
        assertThat(r.accepted()).isEqualTo(6);
        assertThat(r.rejected()).isEqualTo(1);
        assertThat(r.failed()).isEqualTo(1);
        assertThat(r.logged()).isEqualTo(6);
    }

    @Test
    void aLowerFenceAcceptedAfterAHigherOneIsOutOfOrder() {
        History h = new Histories().logRow(0, 3, 0).logRow(1, 4, 10).logRow(0, 3, 20).build();
        FenceOrderChecker.Result r = FenceOrderChecker.check(h);
        assertThat(r.outOfOrder()).hasSize(1);
        assertThat(r.outOfOrder().get(0).toString()).contains("fence 3 accepted after fence 4 of worker 1");
    }

    @Test
    void oneFenceAcceptedFromTwoHoldersIsOutOfOrder() {
        History h = new Histories().logRow(0, 3, 0).logRow(1, 3, 10).build();
        assertThat(FenceOrderChecker.check(h).outOfOrder()).hasSize(1);
    }

    @Test
    void anAcquireWithAFenceNotAboveAnEarlierOneIsARegression() {
        History h = new Histories().acquired(0, 10, 0).acquired(1, 12, 100).acquired(2, 11, 200).acquired(0, 12, 300)
                .acquired(1, 13, 400).build();
        FenceOrderChecker.Result r = FenceOrderChecker.check(h);
        assertThat(r.regressions()).hasSize(2);
        assertThat(r.regressions().get(0).toString()).isEqualTo("worker 2 got fence 11 after fence 12 had been issued");
    }
}
