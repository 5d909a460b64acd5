package dev.turnstile.chaos;

import java.nio.file.Path;
import java.time.Duration;

/**
 * How a chaos run is sized.
 *
 * @param workers worker JVMs per scenario
 * @param ttl each lease's {@code lockAtMostFor}; keep-alive renews every third of it
 * @param hold how long a worker holds the lock between its two fenced writes: longer than the TTL,
 *     so that leases live on keep-alive and a fault mid-hold tests loss detection, not just release
 * @param think how long a worker rests after a release (plus up to as much again, at random)
 * @param warmup steady contention before the first fault
 * @param settle how long the run goes on after each fault
 * @param rounds how many times each fault is injected in a scenario
 * @param workDir where run directories (event files, logs) go
 * @param resourceUrl the PostgreSQL holding the fenced resource
 */
public record ChaosConfig(int workers, Duration ttl, Duration hold, Duration think, Duration warmup, Duration settle,
        int rounds, Path workDir, String resourceUrl) {

    /** The short run: TTL 2 s, holds of 2.4 s, one round per scenario, about 13 s each. */
    public static ChaosConfig shortRun(Path workDir) {
        Duration ttl = Duration.ofSeconds(2);
        return new ChaosConfig(5, ttl, ttl.multipliedBy(6).dividedBy(5), Duration.ofMillis(100), Duration.ofSeconds(1),
                ttl.plusSeconds(2), 1, workDir, FencedResource.DEFAULT_URL);
    }

    /** The long run: as the short one, with three rounds per scenario and longer quiet spells, about a minute each. */
    public static ChaosConfig longRun(Path workDir) {
        Duration ttl = Duration.ofSeconds(2);
        return new ChaosConfig(5, ttl, ttl.multipliedBy(6).dividedBy(5), Duration.ofMillis(100), Duration.ofSeconds(8),
                ttl.plusSeconds(8), 3, workDir, FencedResource.DEFAULT_URL);
    }

    /** The keep-alive interval: a third of the TTL. */
    public Duration heartbeat() {
        return ttl.dividedBy(3);
    }

    /** The recovery limit after a holder's death: TTL + one heartbeat + 1 s. */
    public Duration recoveryLimit() {
        return ttl.plus(heartbeat()).plusSeconds(1);
    }

    /** How soon a holder must hear of its loss once it runs again: one heartbeat + 1 s. */
    public Duration lossNoticeLimit() {
        return heartbeat().plusSeconds(1);
    }

    /** How long a pause or partition lasts: TTL + 1.5 s, so the lease surely expires meanwhile. */
    public Duration outage() {
        return ttl.plusMillis(1500);
    }

    /** A copy with another worker count. */
    public ChaosConfig withWorkers(int n) {
        return new ChaosConfig(n, ttl, hold, think, warmup, settle, rounds, workDir, resourceUrl);
    }

    /** A copy with another round count. */
    public ChaosConfig withRounds(int n) {
        return new ChaosConfig(workers, ttl, hold, think, warmup, settle, n, workDir, resourceUrl);
    }
}
