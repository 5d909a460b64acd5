package dev.turnstile.chaos;

import dev.turnstile.chaos.FencedResource.LogRow;
import dev.turnstile.chaos.History.Hold;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Kleppmann's paused holder: a holder stopped (SIGSTOP) for longer than its TTL and then continued.
 * For each pause it checks that the holder's next fenced write was rejected if a newer fence had
 * written meanwhile, and that the holder was told its lease was lost, soon after it ran again.
 */
public final class PausedHolderChecker {
    private PausedHolderChecker() {}

    /**
     * One pause and what followed.
     *
     * @param worker the paused worker
     * @param pauseAt when SIGSTOP was sent
     * @param resumeAt when SIGCONT was sent
     * @param hold the hold the pause hit, or {@code null} if the worker held nothing
     * @param takenOver another worker acquired a higher fence during the pause
     * @param resumedWrite the outcome of the holder's first write after the pause, or {@code none}
     * @param newerFenceWritten a higher fence had been accepted before that write
     * @param lostAfterResumeMillis from SIGCONT to the loss notification, or infinite if none came
     * @param problem what went wrong, or {@code null}
     */
    public record PauseCheck(int worker, long pauseAt, long resumeAt, Hold hold, boolean takenOver, String resumedWrite,
            boolean newerFenceWritten, double lostAfterResumeMillis, String problem) {
        /** Tells whether the pause behaved as it must. */
        public boolean ok() {
            return problem == null;
        }
    }

    /**
     * Checks every pause in a run.
     *
     * @param history the run
     * @param lostWithin how soon after SIGCONT the holder must be told (renewal interval + 1 s)
     * @return one check per pause
     */
    public static List<PauseCheck> check(History history, Duration lostWithin) {
        List<PauseCheck> out = new ArrayList<>();
        List<Event> resumes = history.ofType(Event.RESUME);
        for (Event pause : history.ofType(Event.PAUSE)) {
            int w = pause.worker();
            Event resume = resumes.stream().filter(r -> r.worker() == w && r.t() >= pause.t()).findFirst().orElse(null);
            long resumeAt = resume == null ? Long.MAX_VALUE : resume.t();
            Hold hold = history.holdAt(w, pause.t());
            if (hold == null) {
                // A bystander (the mixed run's pick at random) may hold nothing: that is no missed fault.
                boolean bystander = pause.detail() != null && pause.detail().contains(Cluster.BYSTANDER);
                out.add(new PauseCheck(w, pause.t(), resumeAt, null, false, "none", false, Double.NaN,
                        bystander ? null : "the pause did not hit a holder: worker " + w + " held nothing when it was stopped"));
                continue;
            }
            boolean takenOver = history.acquisitions().stream()
                    .anyMatch(a -> a.worker() != w && a.fence() > hold.fence() && a.t() > pause.t() && a.t() < resumeAt);
            Event write = history.ofWorker(w).stream()
                    .filter(e -> e.type().equals(Event.WRITE) && e.fence() == hold.fence() && e.t() > resumeAt)
                    .findFirst().orElse(null);
            boolean newer = write != null && newerFenceFirst(history, w, hold.fence(), write);
            double lostMs = hold.lostAt() >= 0 && hold.lostAt() >= pause.t()
                    ? Math.max(0, (hold.lostAt() - resumeAt) / 1e6) : Double.POSITIVE_INFINITY;
            String problem = null;
            if (write != null && newer && write.accepted()) {
                problem = "worker " + w + "'s write with stale fence " + hold.fence() + " was accepted after the pause";
            } else if (Double.isInfinite(lostMs)) {
                problem = "worker " + w + " was never told its lease (fence " + hold.fence() + ") was lost";
            } else if (lostMs > lostWithin.toMillis()) {
                problem = String.format("worker %d was told of the loss %.0f ms after it ran again (limit %d ms)", w, lostMs,
                        lostWithin.toMillis());
            }
            out.add(new PauseCheck(w, pause.t(), resumeAt, hold, takenOver, write == null ? "none" : write.outcome(), newer,
                    lostMs, problem));
        }
        return List.copyOf(out);
    }

    /**
     * Whether a higher fence had written before this write. For an accepted write, by the
     * resource's commit order: its log row (this worker's and fence's latest row logged by the time
     * the worker recorded the write) against the rows before it. A worker paused between its
     * commit and recording the write records it late, after rows that committed later; the times
     * would call its write stale (the long run caught that). For a rejected write, by time.
     */
    private static boolean newerFenceFirst(History history, int worker, long fence, Event write) {
        LogRow own = null;
        if (write.accepted()) {
            for (LogRow r : history.log()) {
                if (r.worker() == worker && r.fence() == fence && r.nanos() <= write.t()) {
                    own = r;
                }
            }
        }
        if (own != null) {
            long seq = own.seq();
            return history.log().stream().anyMatch(r -> r.fence() > fence && r.seq() < seq);
        }
        return history.log().stream().anyMatch(r -> r.fence() > fence && r.nanos() < write.t());
    }
}
