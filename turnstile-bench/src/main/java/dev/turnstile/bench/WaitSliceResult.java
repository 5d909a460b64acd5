package dev.turnstile.bench;

import java.util.Arrays;

/**
 * One contender's measurements in one slice of the same-JVM blocking scenario.
 *
 * @param acquisitions holds that started inside the slice
 * @param failures acquires that timed out or threw, and releases that threw
 * @param overlaps holds that began while another thread of this JVM held the lock (must be 0)
 * @param elapsedNanos the slice length
 * @param perThread acquisitions of each thread
 * @param meanWaitNanos mean time an acquire call took (waiting included)
 * @param p50WaitNanos median acquire time
 * @param p99WaitNanos 99th percentile acquire time
 */
record WaitSliceResult(long acquisitions, long failures, long overlaps, long elapsedNanos, long[] perThread,
        double meanWaitNanos, long p50WaitNanos, long p99WaitNanos) {

    double acquisitionsPerSecond() {
        return acquisitions * 1e9 / elapsedNanos;
    }

    /** Smallest share of any thread in this slice (0 for a starved one). */
    double minShare() {
        return acquisitions == 0 ? 0 : (double) Arrays.stream(perThread).min().orElse(0) / acquisitions;
    }

    /** Largest share of any thread in this slice. */
    double maxShare() {
        return acquisitions == 0 ? 0 : (double) Arrays.stream(perThread).max().orElse(0) / acquisitions;
    }
}
