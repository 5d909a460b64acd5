package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LossNotificationCheckerTest {

    @Test
    void aHandOffAfterTheReleaseCallIsNoTakeover() {
        History h = new Histories().round(0, 1, 0, 1000).round(1, 2, 1001, 2000).build();
        LossNotificationChecker.Result r = LossNotificationChecker.check(h);
        assertThat(r.takeovers()).isZero();
        assertThat(r.silent()).isEmpty();
    }

    @Test
    void aTakeoverTheHolderHeardOfIsTold() {
        History h = new Histories().acquired(0, 1, 0).lost(0, 1, 1980).release(0, 1, 2500, "ALREADY_EXPIRED")
                .round(1, 2, 2100, 3000).build();
        LossNotificationChecker.Result r = LossNotificationChecker.check(h);
        assertThat(r.takeovers()).isEqualTo(1);
        assertThat(r.told()).isEqualTo(1);
        assertThat(r.lostNotifications()).isEqualTo(1);
        assertThat(r.silent()).isEmpty();
    }

    @Test
    void aReleaseThatSaysTheLeaseWasGoneAlsoTells() {
        History h = new Histories().acquired(0, 1, 0).release(0, 1, 2500, "NOT_OWNER").round(1, 2, 2100, 3000).build();
        LossNotificationChecker.Result r = LossNotificationChecker.check(h);
        assertThat(r.told()).isEqualTo(1);
        assertThat(r.silent()).isEmpty();
    }

    @Test
    void aTakeoverTheHolderNeverHeardOfIsSilent() {
        History h = new Histories().acquired(0, 1, 0).release(0, 1, 2500, "RELEASED").round(1, 2, 2100, 3000).build();
        LossNotificationChecker.Result r = LossNotificationChecker.check(h);
        assertThat(r.takeovers()).isEqualTo(1);
        assertThat(r.silent()).hasSize(1);
        assertThat(r.silent().get(0).toString()).contains("worker 0 (fence 1) was taken over by worker 1 (fence 2)");
    }

    @Test
    void aHolderThatNeverReleasedNorHeardIsSilent() {
        History h = new Histories().acquired(0, 1, 0).write(0, 1, Event.ACCEPTED, 10).round(1, 2, 2100, 3000).build();
        assertThat(LossNotificationChecker.check(h).silent()).hasSize(1);
    }

    @Test
    void killedHoldersAreNotCounted() {
        History h = new Histories().acquired(0, 1, 0).harness(Event.KILL, 0, 100).round(1, 2, 2100, 3000)
                .acquired(2, 3, 3100).harness(Event.DESTROY, 2, 3500).round(1, 4, 5700, 6000).build();
        LossNotificationChecker.Result r = LossNotificationChecker.check(h);
        assertThat(r.takeovers()).isZero();
        assertThat(r.silent()).isEmpty();
    }
}
