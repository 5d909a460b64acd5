package dev.turnstile.chaos;

import dev.turnstile.chaos.FencedResource.LogRow;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks (b) and (c): the order of the writes the resource accepted, the writes its fence rejected,
 * and whether the store's fences ever went backwards.
 *
 * <ul>
 *   <li><b>Out of order</b> (from the resource's log, in commit order): an accepted write whose
 *       fence is lower than an earlier accepted one, or equal to it but from another holder.
 *   <li><b>Stale writes rejected</b>: writes the resource refused because a newer fence had written.
 *   <li><b>Fence regressions</b>: an acquire that returned a fence not greater than one some
 *       earlier acquire returned (ordered by when acquire returned). Zero on a store with safe
 *       fences; Redlock can show them.
 * </ul>
 */
public final class FenceOrderChecker {
    private FenceOrderChecker() {}

    /**
     * An accepted write that broke the order.
     *
     * @param row the write
     * @param highestBefore the highest fence accepted before it
     * @param writerOfHighest who wrote that fence
     */
    public record OutOfOrder(LogRow row, long highestBefore, int writerOfHighest) {
        @Override
        public String toString() {
            return "write #" + row.seq() + " by worker " + row.worker() + " with fence " + row.fence()
                    + " accepted after fence " + highestBefore + " of worker " + writerOfHighest;
        }
    }

    /**
     * An acquire whose fence was not above an earlier one.
     *
     * @param acquire the acquire event
     * @param highestBefore the highest fence returned before it
     */
    public record Regression(Event acquire, long highestBefore) {
        @Override
        public String toString() {
            return "worker " + acquire.worker() + " got fence " + acquire.fence() + " after fence " + highestBefore
                    + " had been issued";
        }
    }

    /**
     * What the check found.
     *
     * @param accepted writes the workers saw accepted
     * @param rejected writes the fence rejected (stale)
     * @param failed writes that failed with an error (outcome unknown)
     * @param logged accepted writes in the resource's log
     * @param outOfOrder accepted writes out of fence order
     * @param regressions fences that went backwards
     */
    public record Result(int accepted, int rejected, int failed, int logged, List<OutOfOrder> outOfOrder,
            List<Regression> regressions) {}

    /**
     * Runs the check.
     *
     * @param history the run
     * @return what it found
     */
    public static Result check(History history) {
        int accepted = 0;
        int rejected = 0;
        int failed = 0;
        for (Event e : history.ofType(Event.WRITE)) {
            if (Event.ACCEPTED.equals(e.outcome())) {
                accepted++;
            } else if (Event.REJECTED.equals(e.outcome())) {
                rejected++;
            } else {
                failed++;
            }
        }
        List<OutOfOrder> outOfOrder = new ArrayList<>();
        long highest = Long.MIN_VALUE;
        int writer = -1;
        for (LogRow row : history.log()) {
            if (row.fence() < highest || (row.fence() == highest && row.worker() != writer)) {
                outOfOrder.add(new OutOfOrder(row, highest, writer));
            }
            if (row.fence() > highest) {
                highest = row.fence();
                writer = row.worker();
            }
        }
        List<Regression> regressions = new ArrayList<>();
        long issued = Long.MIN_VALUE;
        for (Event a : history.acquisitions()) {
            if (a.fence() <= issued) {
                regressions.add(new Regression(a, issued));
            }
            issued = Math.max(issued, a.fence());
        }
        return new Result(accepted, rejected, failed, history.log().size(), List.copyOf(outOfOrder), List.copyOf(regressions));
    }
}
