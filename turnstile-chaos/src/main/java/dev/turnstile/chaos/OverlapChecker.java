package dev.turnstile.chaos;

import dev.turnstile.chaos.History.Hold;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Check (a): two workers who both believed they held the lock at the same moment. A hold runs from
 * the return of acquire to the earlier of the release call and the loss notification (a SIGKILLed
 * holder's hold ends at the kill).
 */
public final class OverlapChecker {
    private OverlapChecker() {}

    /**
     * Two holds that overlap.
     *
     * @param first the earlier hold
     * @param second the later hold, which began while the first was still believed
     * @param from when both were held
     * @param to when one of them ended
     */
    public record Overlap(Hold first, Hold second, long from, long to) {
        /** How long both were held, in milliseconds. */
        public double millis() {
            return (to - from) / 1e6;
        }

        /** Tells whether a worker was one of the two holders. */
        public boolean involves(int worker) {
            return first.worker() == worker || second.worker() == worker;
        }

        @Override
        public String toString() {
            return String.format("worker %d (fence %d) and worker %d (fence %d) both held for %.1f ms",
                    first.worker(), first.fence(), second.worker(), second.fence(), millis());
        }
    }

    /**
     * The overlaps of a run.
     *
     * @param overlaps every overlapping pair, by start
     */
    public record Result(List<Overlap> overlaps) {
        /** How many overlapping pairs. */
        public int count() {
            return overlaps.size();
        }

        /** The longest overlap in milliseconds, 0 if none. */
        public double maxMillis() {
            return overlaps.stream().mapToDouble(Overlap::millis).max().orElse(0);
        }

        /** The overlaps in which none of {@code workers} took part. */
        public List<Overlap> notInvolving(Set<Integer> workers) {
            return overlaps.stream().filter(o -> workers.stream().noneMatch(o::involves)).toList();
        }
    }

    /**
     * Finds every pair of holds by different workers that intersect in time.
     *
     * @param history the run
     * @return the overlaps
     */
    public static Result check(History history) {
        List<Hold> holds = history.holds();
        List<Overlap> out = new ArrayList<>();
        for (int j = 0; j < holds.size(); j++) {
            Hold b = holds.get(j);
            for (int i = 0; i < j; i++) {
                Hold a = holds.get(i);
                if (a.worker() != b.worker() && a.end() > b.start() && b.end() > a.start()) {
                    out.add(new Overlap(a, b, Math.max(a.start(), b.start()), Math.min(a.end(), b.end())));
                }
            }
        }
        return new Result(List.copyOf(out));
    }
}
