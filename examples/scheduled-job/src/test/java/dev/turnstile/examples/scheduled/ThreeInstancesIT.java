package dev.turnstile.examples.scheduled;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.examples.scheduled.AppInstance.Tick;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The proof of the example: three instances of the app, as separate JVMs on one store, tick every
 * second under one lock; one is SIGKILLed while it runs a tick; their output shows every tick ran
 * exactly once and a survivor took over. See the example's README for why this holds.
 */
class ThreeInstancesIT {
    /** The app's lockAtMostFor (3 s) over the period (1 s): the ticks a dead holder can block. */
    private static final int MAX_LOST_AFTER_KILL = 3;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "postgresql, jdbc:postgresql://127.0.0.1:5432/test?user=postgres&turnstile.createTable=true",
        "redis,      redis://127.0.0.1:6379"})
    void everyTickRunsExactlyOnceAcrossAKill(String store, String url) throws Exception {
        String lock = "example-tick-" + store + "-" + UUID.randomUUID().toString().substring(0, 8);
        LinkedBlockingQueue<Tick> queue = new LinkedBlockingQueue<>();
        List<AppInstance> instances = new ArrayList<>();
        long started = System.currentTimeMillis();
        try {
            for (String id : List.of("A", "B", "C")) {
                Path log = Path.of("target", "three-instances", store + "-" + id + ".log");
                instances.add(new AppInstance(id, command(id, url, lock), log, queue));
            }
            long allReady = 0;
            for (AppInstance i : instances) {
                i.awaitReady(START_TIMEOUT);
                allReady = Math.max(allReady, i.readyAtMillis());
            }
            // From here every instance's scheduler runs. Give them three ticks to settle: a JVM's first
            // acquire (connection, class loading, no JIT yet) can take long enough for its lease to
            // cover the next second's attempts, so a warm-up tick may go missing, never run twice.
            long steadyFrom = Math.floorDiv(allReady, 1000) + 3;

            List<Tick> history = new ArrayList<>();
            Tick victim = null;
            long deadline = System.currentTimeMillis() + 30_000;
            while (victim == null) {
                Tick t = queue.poll(Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
                assertThat(t).as("a tick within 30 s; outputs:\n%s", outputs(instances)).isNotNull();
                history.add(t);
                // Kill the instance running this tick, mid-run (the job works 300 ms after its fire):
                // only a line read while its tick is still running, not one that waited in a pipe.
                long intoTick = System.currentTimeMillis() - t.second() * 1000;
                if (t.second() >= steadyFrom + 3 && intoTick < 250) {
                    victim = t;
                }
            }
            AppInstance killed = instance(instances, victim.instance());
            killed.kill();
            long killedAt = System.currentTimeMillis() - victim.second() * 1000;

            Thread.sleep(8_000); // the dead holder's lease runs out (3 s), then survivors tick
            queue.drainTo(history);
            // Over HTTP, on a survivor that has run the job since (so its turnstile.job timer exists).
            long killedTick = victim.second();
            history.stream().filter(t -> t.second() > killedTick).findFirst()
                    .map(t -> instance(instances, t.instance()))
                    .ifPresent(survivor -> ActuatorCheck.check(survivor.port(), lock));
            for (AppInstance i : instances) {
                i.close();
            }
            queue.drainTo(history);

            String summary = new TickHistory(history).check(steadyFrom, killed.id, victim.second(), MAX_LOST_AFTER_KILL, 3);
            System.out.println(store + ": " + summary + " (SIGKILL done " + killedAt + " ms into the tick; start-up "
                    + (allReady - started) + " ms)");
        } finally {
            for (AppInstance i : instances) {
                i.close();
            }
        }
    }

    private static AppInstance instance(List<AppInstance> all, String id) {
        return all.stream().filter(i -> i.id.equals(id)).findFirst().orElseThrow();
    }

    private static String outputs(List<AppInstance> all) {
        StringBuilder b = new StringBuilder();
        for (AppInstance i : all) {
            b.append("--- ").append(i.id).append(":\n").append(i.output()).append('\n');
        }
        return b.toString();
    }

    /** The app's jar, as a separate JVM started for speed (C1 only, serial GC, small heap: it is CI time). */
    private static List<String> command(String id, String url, String lock) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String jar = System.getProperty("example.jar", "target/turnstile-example-scheduled-job-0.1.0-SNAPSHOT.jar");
        return List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx192m", "-Xss512k",
                "-jar", jar,
                "--example.instance-id=" + id,
                "--example.lock-name=" + lock,
                "--turnstile.store.url=" + url,
                "--server.port=0");
    }
}
