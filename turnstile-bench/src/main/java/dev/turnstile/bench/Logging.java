package dev.turnstile.bench;

/** Keeps library logs (HikariCP pool start, Spring, Turnstile debug) out of the measured output. */
final class Logging {
    private Logging() {}

    /** Call first in {@code main}, before any logger exists; an explicit -D setting wins. */
    static void quiet() {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
    }
}
