package dev.turnstile.chaos;

import dev.turnstile.ReleaseOutcome;
import dev.turnstile.chaos.History.Hold;
import java.util.ArrayList;
import java.util.List;

/**
 * Check (e): leases lost without their holder being told. A lease was taken over when another
 * worker acquired a higher fence after it was granted and before its holder called release. Its
 * holder was told if it recorded a loss notification, or if release reported anything other than
 * {@code RELEASED} or {@code SHORTENED_TO_AT_LEAST}. Holders that were SIGKILLed (or killed by the
 * harness at the end of the run) are not counted: they cannot be told anything.
 */
public final class LossNotificationChecker {
    private LossNotificationChecker() {}

    /**
     * A lease taken over while its holder believed all was well.
     *
     * @param hold the lost hold
     * @param takeover the other worker's acquire
     */
    public record SilentLoss(Hold hold, Event takeover) {
        @Override
        public String toString() {
            return "worker " + hold.worker() + " (fence " + hold.fence() + ") was taken over by worker " + takeover.worker()
                    + " (fence " + takeover.fence() + ") and was never told (release said " + hold.releaseOutcome() + ")";
        }
    }

    /**
     * What the check found.
     *
     * @param takeovers leases taken over while their holders lived
     * @param told of those, how many holders were told
     * @param lostNotifications loss notifications recorded in all
     * @param silent the ones nobody told
     */
    public record Result(int takeovers, int told, int lostNotifications, List<SilentLoss> silent) {}

    /**
     * Runs the check.
     *
     * @param history the run
     * @return what it found
     */
    public static Result check(History history) {
        List<Event> acquisitions = history.acquisitions();
        int takeovers = 0;
        int told = 0;
        List<SilentLoss> silent = new ArrayList<>();
        for (Hold h : history.holds()) {
            if (h.killed() || h.destroyed()) {
                continue;
            }
            long until = h.releaseCallAt() >= 0 ? h.releaseCallAt() : Long.MAX_VALUE;
            Event takeover = acquisitions.stream()
                    .filter(a -> a.worker() != h.worker() && a.fence() > h.fence() && a.t() > h.start() && a.t() < until)
                    .findFirst().orElse(null);
            if (takeover == null) {
                continue;
            }
            takeovers++;
            boolean releaseSaidSo = h.releaseOutcome() != null
                    && !h.releaseOutcome().equals(ReleaseOutcome.RELEASED.name())
                    && !h.releaseOutcome().equals(ReleaseOutcome.SHORTENED_TO_AT_LEAST.name());
            if (h.lostAt() >= 0 || releaseSaidSo) {
                told++;
            } else {
                silent.add(new SilentLoss(h, takeover));
            }
        }
        return new Result(takeovers, told, history.ofType(Event.LOST).size(), List.copyOf(silent));
    }
}
