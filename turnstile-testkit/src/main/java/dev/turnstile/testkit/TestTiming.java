package dev.turnstile.testkit;

import java.time.Duration;

/**
 * Test durations scaled by the system property {@code turnstile.test.timeScale} (default 1), so a
 * slow or loaded machine can stretch every TTL and wait in the suite at once, as Curator's
 * {@code Timing} does.
 */
public final class TestTiming {
    private static final double SCALE = Double.parseDouble(System.getProperty("turnstile.test.timeScale", "1"));

    private TestTiming() {}

    /**
     * Returns {@code millis} milliseconds, scaled.
     *
     * @param millis the unscaled duration in milliseconds
     * @return the scaled duration
     */
    public static Duration ms(long millis) {
        return Duration.ofMillis(Math.round(millis * SCALE));
    }

    /**
     * Sleeps for {@code millis} milliseconds, scaled.
     *
     * @param millis the unscaled duration in milliseconds
     */
    public static void sleep(long millis) {
        try {
            Thread.sleep(ms(millis).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
