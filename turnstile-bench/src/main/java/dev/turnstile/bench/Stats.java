package dev.turnstile.bench;

import java.util.Arrays;

/** Small order statistics; inputs are copied, never sorted in place. */
final class Stats {
    private Stats() {}

    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        int n = s.length;
        return n == 0 ? Double.NaN : n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    static double min(double[] xs) {
        return Arrays.stream(xs).min().orElse(Double.NaN);
    }

    static double max(double[] xs) {
        return Arrays.stream(xs).max().orElse(Double.NaN);
    }

    /** Nearest-rank percentile of an already sorted array; {@code p} in (0, 100]. */
    static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
    }
}
