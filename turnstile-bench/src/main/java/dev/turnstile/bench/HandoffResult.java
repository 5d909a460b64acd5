package dev.turnstile.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The merged outcome of one hand-off round: every child's holds put on one time line.
 *
 * @param acquisitions holds that started inside the measured window
 * @param handoffs consecutive holds by two different waiters (processes, or threads of one process
 *     when the children run several)
 * @param crossProcessHandoffs of those, the ones where the next holder ran in another process (with
 *     one thread per child, all of them)
 * @param overlaps holds that started before the previous one ended (must be 0: mutual exclusion)
 * @param gapP50Nanos median of release-to-next-acquire gaps, over hand-offs to another waiter
 * @param gapP99Nanos 99th percentile of those gaps
 * @param gapMaxNanos largest of those gaps
 * @param minShare smallest share of acquisitions of any waiter (0 for a starved one)
 * @param maxShare largest share of acquisitions of any waiter
 * @param cpuPerSecond mean CPU seconds each waiter used per wall second of the loop (a process's
 *     CPU divided among its threads)
 * @param seconds length of the measured window
 */
record HandoffResult(long acquisitions, long handoffs, long crossProcessHandoffs, long overlaps, long gapP50Nanos, long gapP99Nanos,
        long gapMaxNanos, double minShare, double maxShare, double cpuPerSecond, double seconds) {

    private record Hold(int waiter, long acquired, long releasing) {}

    /**
     * Merges the children's logs.
     *
     * @param threads waiting threads per child: each is a waiter of its own for shares and gaps
     */
    static HandoffResult of(List<HandoffLog> logs, long startNanos, long endNanos, int threads) {
        List<Hold> holds = new ArrayList<>();
        for (int p = 0; p < logs.size(); p++) {
            HandoffLog log = logs.get(p);
            for (int i = 0; i < log.acquired().length; i++) {
                long a = log.acquired()[i];
                // Holds taken after the deadline happen only because the others stopped competing.
                if (a - startNanos >= 0 && a - endNanos <= 0) {
                    holds.add(new Hold(p * threads + log.thread()[i], a, log.releasing()[i]));
                }
            }
        }
        holds.sort(Comparator.comparingLong(Hold::acquired));

        long[] perWaiter = new long[logs.size() * threads];
        long[] gaps = new long[holds.size()];
        int handoffs = 0;
        long crossProcess = 0;
        long overlaps = 0;
        for (int i = 0; i < holds.size(); i++) {
            Hold h = holds.get(i);
            perWaiter[h.waiter()]++;
            if (i > 0) {
                Hold prev = holds.get(i - 1);
                if (h.acquired() < prev.releasing()) {
                    overlaps++;
                }
                if (h.waiter() != prev.waiter()) {
                    gaps[handoffs++] = h.acquired() - prev.releasing();
                }
                if (h.waiter() / threads != prev.waiter() / threads) {
                    crossProcess++;
                }
            }
        }
        long[] sortedGaps = Arrays.copyOf(gaps, handoffs);
        Arrays.sort(sortedGaps);
        double total = Math.max(1, holds.size());
        double minShare = Arrays.stream(perWaiter).min().orElse(0) / total;
        double maxShare = Arrays.stream(perWaiter).max().orElse(0) / total;
        double cpu = logs.stream().mapToDouble(l -> (double) l.cpuNanos() / l.wallNanos()).average().orElse(Double.NaN) / threads;
        return new HandoffResult(holds.size(), handoffs, crossProcess, overlaps, Stats.percentile(sortedGaps, 50),
                Stats.percentile(sortedGaps, 99), handoffs == 0 ? 0 : sortedGaps[handoffs - 1], minShare, maxShare, cpu,
                (endNanos - startNanos) / 1e9);
    }
}
