package dev.turnstile.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs one store × fault scenario end to end: store, workers, faults, stop, checks, verdict. */
public final class Scenario {
    private static final Logger log = LoggerFactory.getLogger(Scenario.class);
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("MMdd-HHmmss");

    private Scenario() {}

    /**
     * Runs a scenario.
     *
     * @param store the store
     * @param fault the fault
     * @param config the sizing
     * @return the checked result (a harness error is a failure of the result, not an exception)
     */
    public static ScenarioResult run(StoreSpec store, Fault fault, ChaosConfig config) {
        long start = System.nanoTime();
        String id = store.name().replaceAll("[^A-Za-z0-9]+", "_") + "-" + fault.id() + "-" + LocalDateTime.now().format(STAMP)
                + "-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000, 0x10000));
        Path dir = config.workDir().toAbsolutePath().resolve(id);
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> problems = new ArrayList<>();
        int workers = config.workers();
        int rounds = 0;
        try {
            Path faketime = fault.needsFaketime() ? FakeTime.library() : null;
            try (StoreInstance instance = store.start(dir)) {
                instance.applySchema();
                FencedResource.setUp(config.resourceUrl(), id);
                try (Cluster cluster = new Cluster(instance, config, dir, "chaos-" + id, id, fault.needsProxy(), faketime)) {
                    for (int i = 0; i < config.workers(); i++) {
                        cluster.spawn();
                    }
                    cluster.awaitAcquisitions(1, Duration.ofSeconds(60));
                    if (fault instanceof Fault.Mixed mixed) {
                        // a time-boxed random schedule: each step is its own gap and fault
                        long end = System.nanoTime() + mixed.length().toNanos();
                        while (System.nanoTime() < end) {
                            rounds++;
                            String problem = fault.inject(cluster);
                            if (problem != null) {
                                problems.add("step " + rounds + ": " + problem);
                            }
                        }
                        Harness.sleep(config.settle().toMillis());
                        awaitRecovery(cluster, config);
                    } else {
                        for (int round = 0; round < config.rounds(); round++) {
                            rounds++;
                            Harness.sleep(config.warmup().toMillis());
                            String problem = fault.inject(cluster);
                            if (problem != null) {
                                problems.add("fault not injected in round " + (round + 1) + ": " + problem);
                            }
                            Harness.sleep(config.settle().toMillis());
                            if (fault instanceof Fault.KillHolder && round + 1 < config.rounds()) {
                                cluster.spawn(); // keep K contenders
                            }
                        }
                        awaitRecovery(cluster, config);
                    }
                    workers = cluster.workers().size();
                    cluster.stop(Duration.ofSeconds(20));
                }
            } finally {
                if (store.kind() == StoreSpec.Kind.POSTGRESQL
                        && (fault instanceof Fault.RestartStore || fault instanceof Fault.Mixed)) {
                    StoreInstance.awaitPostgres(120);
                }
            }
        } catch (Exception e) {
            log.error("scenario {} failed", id, e);
            problems.add("harness error: " + e);
        }
        return analyse(store, fault, config, dir, workers, rounds, problems, start);
    }

    /**
     * Lets the run go on after the last fault until someone acquires (at most the recovery limit
     * and 2 s more), so a settle shorter than a recovery does not end the run before it: the
     * liveness check wants an acquisition after the last fault, and the long run's settle (1 s) is
     * shorter than its recovery limit. Acquisitions are counted from the moment the fault ended.
     */
    private static void awaitRecovery(Cluster cluster, ChaosConfig config) {
        cluster.awaitAcquiredSince(cluster.lastFaultEnd(), config.recoveryLimit().plusSeconds(2));
    }

    private static ScenarioResult analyse(StoreSpec store, Fault fault, ChaosConfig config, Path dir, int workers, int rounds,
            List<String> problems, long start) {
        History history;
        try {
            history = History.load(dir, FencedResource.readLog(config.resourceUrl(), dir.getFileName().toString()));
        } catch (Exception e) {
            problems.add("cannot read the history: " + e);
            history = History.load(dir, List.of());
        }
        ScenarioResult r = check(store, fault, config, history, dir.toString(), workers, problems,
                Duration.ofNanos(System.nanoTime() - start).toMillis());
        return r.withRounds(rounds, fault instanceof Fault.Mixed m ? m.tally() : "");
    }

    /**
     * Runs every checker over a history and judges it.
     *
     * @param store the store
     * @param fault the fault
     * @param config the sizing (for the limits)
     * @param history the history
     * @param dir where it came from
     * @param workers how many workers took part
     * @param problems harness problems already found
     * @param wallMillis the scenario's duration
     * @return the result
     */
    public static ScenarioResult check(StoreSpec store, Fault fault, ChaosConfig config, History history, String dir, int workers,
            List<String> problems, long wallMillis) {
        OverlapChecker.Result overlaps = OverlapChecker.check(history);
        FenceOrderChecker.Result fences = FenceOrderChecker.check(history);
        RecoveryChecker.Result recovery = RecoveryChecker.check(history, fault.recoveryEvents());
        LossNotificationChecker.Result losses = LossNotificationChecker.check(history);
        List<PausedHolderChecker.PauseCheck> pauses = PausedHolderChecker.check(history, config.lossNoticeLimit());
        Verdict v = Verdict.judge(store, fault, config, history, overlaps, fences, recovery, losses, pauses, problems);
        return new ScenarioResult(store.name(), fault.id(), fault.describe(config), dir, wallMillis, workers,
                history.acquisitions().size(), overlaps, fences, recovery, losses, pauses, List.copyOf(v.failures),
                List.copyOf(v.notes), fault instanceof Fault.Mixed ? 0 : config.rounds(), "");
    }
}
