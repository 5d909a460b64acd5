package dev.turnstile.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The merged outcome of one hand-off round: every child's holds put on one time line.
 *
 * @param acquisitions holds that started inside the measured window
 * @param handoffs consecutive holds by two different processes
 * @param overlaps holds that started before the previous one ended (must be 0: mutual exclusion)
 * @param gapP50Nanos median of release-to-next-acquire gaps, over hand-offs to another process
 * @param gapP99Nanos 99th percentile of those gaps
 * @param gapMaxNanos largest of those gaps
 * @param minShare smallest share of acquisitions of any process (0 for a starved one)
 * @param maxShare largest share of acquisitions of any process
 * @param cpuPerSecond mean CPU seconds each process used per wall second of the loop
 * @param seconds length of the measured window
 */
record HandoffResult(long acquisitions, long handoffs, long overlaps, long gapP50Nanos, long gapP99Nanos,
        long gapMaxNanos, double minShare, double maxShare, double cpuPerSecond, double seconds) {

    private record Hold(int process, long acquired, long releasing) {}

    static HandoffResult of(List<HandoffLog> logs, long startNanos, long endNanos) {
        List<Hold> holds = new ArrayList<>();
        for (int p = 0; p < logs.size(); p++) {
            HandoffLog log = logs.get(p);
            for (int i = 0; i < log.acquired().length; i++) {
                long a = log.acquired()[i];
                // Holds taken after the deadline happen only because the others stopped competing.
                if (a - startNanos >= 0 && a - endNanos <= 0) {
                    holds.add(new Hold(p, a, log.releasing()[i]));
                }
            }
        }
        holds.sort(Comparator.comparingLong(Hold::acquired));

        long[] perProcess = new long[logs.size()];
        long[] gaps = new long[holds.size()];
        int handoffs = 0;
        long overlaps = 0;
        for (int i = 0; i < holds.size(); i++) {
            Hold h = holds.get(i);
            perProcess[h.process()]++;
            if (i > 0) {
                Hold prev = holds.get(i - 1);
                if (h.acquired() < prev.releasing()) {
                    overlaps++;
                }
                if (h.process() != prev.process()) {
                    gaps[handoffs++] = h.acquired() - prev.releasing();
                }
            }
        }
        long[] sortedGaps = Arrays.copyOf(gaps, handoffs);
        Arrays.sort(sortedGaps);
        double total = Math.max(1, holds.size());
        double minShare = Arrays.stream(perProcess).min().orElse(0) / total;
        double maxShare = Arrays.stream(perProcess).max().orElse(0) / total;
        double cpu = logs.stream().mapToDouble(l -> (double) l.cpuNanos() / l.wallNanos()).average().orElse(Double.NaN);
        return new HandoffResult(holds.size(), handoffs, overlaps, Stats.percentile(sortedGaps, 50),
                Stats.percentile(sortedGaps, 99), handoffs == 0 ? 0 : sortedGaps[handoffs - 1], minShare, maxShare, cpu,
                (endNanos - startNanos) / 1e9);
    }
}
