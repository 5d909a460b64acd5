package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class PausedHolderCheckerTest {
    static final Duration LIMIT = Duration.ofMillis(1666);

    /** Worker 0 holds fence 1 and is paused from 100 to 3600; worker 1 takes over at 2100 and writes. */
    static Histories paused() {
        return new Histories().acquired(0, 1, 0).write(0, 1, Event.ACCEPTED, 10).harness(Event.PAUSE, 0, 100)
                .acquired(1, 2, 2100).write(1, 2, Event.ACCEPTED, 2110).harness(Event.RESUME, 0, 3600);
    }

    @Test
    void aRejectedStaleWriteAndAPromptNoticePass() {
        History h = paused().write(0, 1, Event.REJECTED, 3610).lost(0, 1, 3615).release(0, 1, 3620, "ALREADY_EXPIRED")
                .release(1, 2, 4500, "RELEASED").build();
        List<PausedHolderChecker.PauseCheck> checks = PausedHolderChecker.check(h, LIMIT);
        assertThat(checks).hasSize(1);
        PausedHolderChecker.PauseCheck c = checks.get(0);
        assertThat(c.ok()).as(c.problem()).isTrue();
        assertThat(c.takenOver()).isTrue();
        assertThat(c.resumedWrite()).isEqualTo(Event.REJECTED);
        assertThat(c.newerFenceWritten()).isTrue();
        assertThat(c.lostAfterResumeMillis()).isEqualTo(15.0);
    }

    @Test
    void aStaleWriteAcceptedAfterTheResumeFails() {
        History h = paused().write(0, 1, Event.ACCEPTED, 3610).lost(0, 1, 3615).build();
        PausedHolderChecker.PauseCheck c = PausedHolderChecker.check(h, LIMIT).get(0);
        assertThat(c.ok()).isFalse();
        assertThat(c.problem()).contains("stale fence 1 was accepted");
    }

    @Test
    void aHolderNeverToldFails() {
        History h = paused().write(0, 1, Event.REJECTED, 3610).release(0, 1, 3620, "ALREADY_EXPIRED").build();
        PausedHolderChecker.PauseCheck c = PausedHolderChecker.check(h, LIMIT).get(0);
        assertThat(c.ok()).isFalse();
        assertThat(c.problem()).contains("never told");
    }

    @Test
    void aLateNoticeFails() {
        History h = paused().write(0, 1, Event.REJECTED, 3610).lost(0, 1, 6000).build();
        PausedHolderChecker.PauseCheck c = PausedHolderChecker.check(h, LIMIT).get(0);
        assertThat(c.ok()).isFalse();
        assertThat(c.problem()).contains("2400 ms after it ran again");
    }

    @Test
    void aPauseThatHitNoHolderFails() {
        History h = new Histories().round(0, 1, 0, 50).harness(Event.PAUSE, 0, 100).harness(Event.RESUME, 0, 3600).build();
        PausedHolderChecker.PauseCheck c = PausedHolderChecker.check(h, LIMIT).get(0);
        assertThat(c.ok()).isFalse();
        assertThat(c.problem()).contains("did not hit a holder");
    }

    @Test
    void aBystanderPauseThatHitNoHolderIsNoMissedFault() {
        // the mixed run pauses a worker chosen at random: holding nothing is then no problem
        History h = new Histories().round(0, 1, 0, 50).harnessDetail(Event.PAUSE, 0, 100, "pid 1, " + Cluster.BYSTANDER)
                .harness(Event.RESUME, 0, 3600).build();
        PausedHolderChecker.PauseCheck c = PausedHolderChecker.check(h, LIMIT).get(0);
        assertThat(c.ok()).as(c.problem()).isTrue();
        assertThat(c.hold()).isNull();
    }

    @Test
    void aWriteCommittedBeforeTheTakeoverButRecordedAfterTheResumeIsNotStale() {
        // Found by the long run: the pause landed between the holder's commit and its event line.
        History h = new Histories().acquired(0, 1, 0).logRow(0, 1, 50).harness(Event.PAUSE, 0, 60)
                .acquired(1, 2, 2100).write(1, 2, Event.ACCEPTED, 2110).harness(Event.RESUME, 0, 3600)
                .writeEvent(0, 1, Event.ACCEPTED, 3605).lost(0, 1, 3606).build();
        PausedHolderChecker.PauseCheck c = PausedHolderChecker.check(h, LIMIT).get(0);
        assertThat(c.ok()).as(c.problem()).isTrue();
        assertThat(c.newerFenceWritten()).isFalse();
    }
}
