package dev.turnstile.bench;

/**
 * One contender's measurements in one slice.
 *
 * @param ops acquire+release cycles completed
 * @param failures cycles whose acquire or release did not succeed (or threw)
 * @param elapsedNanos wall time from the common start to the last thread's end
 * @param meanNanos mean cycle latency
 * @param p50Nanos median cycle latency
 * @param p99Nanos 99th percentile cycle latency
 */
record SliceResult(long ops, long failures, long elapsedNanos, double meanNanos, long p50Nanos, long p99Nanos) {

    double opsPerSecond() {
        return ops * 1e9 / elapsedNanos;
    }
}
