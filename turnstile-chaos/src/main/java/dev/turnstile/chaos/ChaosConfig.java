package dev.turnstile.chaos;

import java.nio.file.Path;
import java.time.Duration;

/**
 * How a chaos run is sized.
 *
 * @param workers worker JVMs per scenario
 * @param ttl each lease's {@code lockAtMostFor}; keep-alive renews every third of it
 * @param hold how long a worker holds the lock between its two fenced writes in a long hold: longer
 *     than the TTL, so that leases live on keep-alive and a fault mid-hold tests loss detection, not
 *     just release
 * @param think how long a worker rests after a release (plus up to as much again, at random)
 * @param warmup steady contention before each fault
 * @param settle how long the run goes on after each fault
 * @param rounds how many times each fault is injected in a scenario
 * @param workDir where run directories (event files, logs) go
 * @param resourceUrl the PostgreSQL holding the fenced resource
 * @param outage how long a pause, partition or Redlock node loss lasts: longer than the TTL, so the
 *     lease surely expires meanwhile
 * @param latencySpell how long the latency fault lasts
 * @param clockStep how long the clock fault leaves each of its two jumps in place
 * @param clockJump how far the clock fault jumps the holder's wall clock, forward then back
 * @param shortHold the longest short hold; {@link Duration#ZERO} when every hold is a long one
 * @param longHoldShare the share of holds that are long ones (the others are short: uniform in
 *     0..{@code shortHold}), so that a run sees many hand-overs besides the keep-alive-borne holds
 *     that the faults aim at (and a worker also holds long when the harness asks for a target)
 */
public record ChaosConfig(int workers, Duration ttl, Duration hold, Duration think, Duration warmup, Duration settle,
        int rounds, Path workDir, String resourceUrl, Duration outage, Duration latencySpell, Duration clockStep,
        Duration clockJump, Duration shortHold, double longHoldShare) {

    /** The short run (CI and {@code run.sh --short}): TTL 2 s, every hold 2.4 s, one round per scenario, about 13 s each. */
    public static ChaosConfig shortRun(Path workDir) {
        Duration ttl = Duration.ofSeconds(2);
        return new ChaosConfig(5, ttl, ttl.multipliedBy(6).dividedBy(5), Duration.ofMillis(100), Duration.ofSeconds(1),
                ttl.plusSeconds(2), 1, workDir, FencedResource.DEFAULT_URL, ttl.plusMillis(1500), Duration.ofSeconds(4),
                Duration.ofMillis(2500), Duration.ofMinutes(5), Duration.ZERO, 1.0);
    }

    /**
     * The CI run ({@code ChaosSuiteTest}): one round per scenario with the long run's spells (TTL 1 s,
     * outages of TTL + 0.8 s, most holds short), which the long run's 20 rounds of every cell show
     * to pass on a 2-core machine; a cell takes about 5–8 s instead of the short run's 7–13 s, so that
     * CI keeps the fault matrix and stays under 30 minutes.
     */
    public static ChaosConfig ciRun(Path workDir) {
        ChaosConfig l = longRun(workDir);
        return new ChaosConfig(l.workers, l.ttl, l.hold, l.think, l.warmup, l.settle, 1, workDir, l.resourceUrl, l.outage,
                l.latencySpell, l.clockStep, l.clockJump, l.shortHold, l.longHoldShare);
    }

    /**
     * The long run ({@code run.sh --long}): 20 rounds per scenario, sized so that every cell of the
     * CI stores fits in about 40 minutes on a 2-core machine. Compared with the short run every
     * spell is shorter: TTL 1 s (keep-alive every 333 ms), long holds of 1.2 s, outages of TTL + 0.8 s,
     * 0.5 s of contention before each fault and 1 s after it, latency for 1.8 s, clock jumps of
     * 0.9 s each, of 5 s rather than 5 min (a forward jump of an SQLite client keeps the lock from
     * everyone for as long as the jump: with 5 min, a round could not find a holder for 5 min); and only a tenth of the holds are long ones, the others last up to 100 ms, so a
     * cell sees hundreds of acquisitions and hand-overs, not one per fault. A fault still hits a
     * long hold: the harness asks for one (the next worker to acquire holds long) when it needs a
     * target.
     */
    public static ChaosConfig longRun(Path workDir) {
        Duration ttl = Duration.ofSeconds(1);
        return new ChaosConfig(5, ttl, ttl.multipliedBy(6).dividedBy(5), Duration.ofMillis(40), Duration.ofMillis(500),
                Duration.ofSeconds(1), 20, workDir, FencedResource.DEFAULT_URL, ttl.plusMillis(800), Duration.ofMillis(1800),
                Duration.ofMillis(900), Duration.ofSeconds(5), Duration.ofMillis(100), 0.1);
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

    /** A copy with another worker count. */
    public ChaosConfig withWorkers(int n) {
        return new ChaosConfig(n, ttl, hold, think, warmup, settle, rounds, workDir, resourceUrl, outage, latencySpell, clockStep,
                clockJump, shortHold, longHoldShare);
    }

    /** A copy with another round count. */
    public ChaosConfig withRounds(int n) {
        return new ChaosConfig(workers, ttl, hold, think, warmup, settle, n, workDir, resourceUrl, outage, latencySpell, clockStep,
                clockJump, shortHold, longHoldShare);
    }
}
