package dev.turnstile.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Check (d): how long the lock stayed unusable after its holder died (was SIGKILLed, or, for the
 * pause and partition faults, fell silent): from the harness's fault timestamp to the next acquire
 * by any other worker.
 */
public final class RecoveryChecker {
    private RecoveryChecker() {}

    /**
     * One fault and the acquire that followed it.
     *
     * @param fault the fault event type
     * @param victim the holder the fault hit
     * @param faultAt when the harness injected it
     * @param nextAcquireAt when another worker next acquired, or {@code -1} if nobody did
     * @param nextWorker who, or {@code -1}
     */
    public record Recovery(String fault, int victim, long faultAt, long nextAcquireAt, int nextWorker) {
        /** Milliseconds from fault to next acquire; infinite if nobody acquired. */
        public double millis() {
            return nextAcquireAt < 0 ? Double.POSITIVE_INFINITY : (nextAcquireAt - faultAt) / 1e6;
        }
    }

    /**
     * The recoveries of a run.
     *
     * @param recoveries one per fault event
     */
    public record Result(List<Recovery> recoveries) {
        /** The slowest recovery in milliseconds, 0 if there was no fault. */
        public double worstMillis() {
            return recoveries.stream().mapToDouble(Recovery::millis).max().orElse(0);
        }
    }

    /**
     * Measures recovery after every harness event of the given types.
     *
     * @param history the run
     * @param faultTypes for example {@code kill}, {@code pause}, {@code partition}
     * @return the recoveries
     */
    public static Result check(History history, Set<String> faultTypes) {
        List<Recovery> out = new ArrayList<>();
        List<Event> acquisitions = history.acquisitions();
        for (Event f : history.events()) {
            if (!History.isHarnessEvent(f) || !faultTypes.contains(f.type())) {
                continue;
            }
            Event next = acquisitions.stream().filter(a -> a.t() > f.t() && a.worker() != f.worker()).findFirst().orElse(null);
            out.add(new Recovery(f.type(), f.worker(), f.t(), next == null ? -1 : next.t(), next == null ? -1 : next.worker()));
        }
        return new Result(List.copyOf(out));
    }
}
