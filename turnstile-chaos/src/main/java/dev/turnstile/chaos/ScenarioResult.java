package dev.turnstile.chaos;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The outcome of one store × fault scenario: the checkers' results and the verdict.
 *
 * @param store the store's name
 * @param fault the fault's name
 * @param faultDescription what the fault did
 * @param dir the run directory with the event files and worker logs
 * @param wallMillis how long the scenario took
 * @param workers how many worker JVMs took part
 * @param acquisitions successful acquisitions
 * @param overlaps check (a)
 * @param fences checks (b) and (c)
 * @param recovery check (d)
 * @param losses check (e)
 * @param pauses the paused-holder checks (pause fault only)
 * @param failures the pass criteria this scenario broke; empty when it passed
 * @param notes what the store cannot promise, with the measured figure, and other remarks
 * @param rounds fault rounds run (for the mixed run: steps of its schedule)
 * @param schedule the mixed run's faults with their counts; empty for a matrix cell
 */
public record ScenarioResult(String store, String fault, String faultDescription, String dir, long wallMillis, int workers,
        int acquisitions, OverlapChecker.Result overlaps, FenceOrderChecker.Result fences, RecoveryChecker.Result recovery,
        LossNotificationChecker.Result losses, List<PausedHolderChecker.PauseCheck> pauses, List<String> failures,
        List<String> notes, int rounds, String schedule) {

    /** Tells whether every pass criterion held. */
    public boolean passed() {
        return failures.isEmpty();
    }

    /** A copy with the rounds actually run and the mixed run's schedule. */
    public ScenarioResult withRounds(int n, String schedule) {
        return new ScenarioResult(store, fault, faultDescription, dir, wallMillis, workers, acquisitions, overlaps, fences, recovery,
                losses, pauses, failures, notes, n, schedule);
    }

    /** Holds the pause fault stopped that were a holder's (bystander pauses of the mixed run that held nothing are not). */
    public long pausedHolders() {
        return pauses.stream().filter(p -> p.hold() != null).count();
    }

    /** The result as a JSON-ready map. */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("store", store);
        m.put("fault", fault);
        m.put("faultDescription", faultDescription);
        m.put("pass", passed());
        m.put("rounds", rounds);
        if (!schedule.isEmpty()) {
            m.put("schedule", schedule);
        }
        m.put("workers", workers);
        m.put("acquisitions", acquisitions);
        m.put("overlaps", overlaps == null ? null : overlaps.count());
        m.put("overlapMaxMs", overlaps == null ? null : round(overlaps.maxMillis()));
        m.put("fencedWritesOutOfOrder", fences == null ? null : fences.outOfOrder().size());
        m.put("staleWritesRejected", fences == null ? null : fences.rejected());
        m.put("writesAccepted", fences == null ? null : fences.accepted());
        m.put("writesFailed", fences == null ? null : fences.failed());
        m.put("fenceRegressions", fences == null ? null : fences.regressions().size());
        List<Object> rec = new ArrayList<>();
        if (recovery != null) {
            for (RecoveryChecker.Recovery r : recovery.recoveries()) {
                Map<String, Object> x = new LinkedHashMap<>();
                x.put("fault", r.fault());
                x.put("victim", r.victim());
                x.put("ms", Double.isInfinite(r.millis()) ? null : round(r.millis()));
                x.put("nextHolder", r.nextWorker());
                rec.add(x);
            }
        }
        m.put("recoveries", rec);
        m.put("worstRecoveryMs", recovery == null || recovery.recoveries().isEmpty() ? null
                : Double.isInfinite(recovery.worstMillis()) ? "never" : round(recovery.worstMillis()));
        m.put("takeovers", losses == null ? null : losses.takeovers());
        m.put("takeoversTold", losses == null ? null : losses.told());
        m.put("lostNotifications", losses == null ? null : losses.lostNotifications());
        m.put("silentLosses", losses == null ? null : losses.silent().size());
        List<Object> ps = new ArrayList<>();
        for (PausedHolderChecker.PauseCheck p : pauses) {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("worker", p.worker());
            x.put("fence", p.hold() == null ? null : p.hold().fence());
            x.put("takenOver", p.takenOver());
            x.put("resumedWrite", p.resumedWrite());
            x.put("newerFenceHadWritten", p.newerFenceWritten());
            x.put("lostNoticeAfterResumeMs", Double.isFinite(p.lostAfterResumeMillis()) ? round(p.lostAfterResumeMillis()) : null);
            x.put("ok", p.ok());
            ps.add(x);
        }
        m.put("pauses", ps);
        List<String> examples = new ArrayList<>();
        if (overlaps != null) {
            overlaps.overlaps().stream().limit(5).forEach(o -> examples.add(o.toString()));
        }
        m.put("overlapExamples", examples);
        m.put("failures", failures);
        m.put("notes", notes);
        m.put("wallMs", wallMillis);
        m.put("dir", dir);
        return m;
    }

    static double round(double v) {
        return Math.round(v * 10) / 10.0;
    }
}
