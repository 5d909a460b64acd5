package dev.turnstile.examples.scheduled;

import dev.turnstile.job.JobContext;
import dev.turnstile.spring.TurnstileLock;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The job: every second, on every instance, the scheduler calls {@link #tick()}; the lock lets one
 * instance run it and the others skip it. Each run prints {@code TICK <second> <instance> <fence>}.
 *
 * <p>Why a cron trigger and not {@code fixedRate = 1000}, and why {@code lockAtLeastFor = 500ms}:
 * see README.md ("Exactly once per tick").
 */
@Component
class TickJob {
    private final String instance;
    private final long workMillis;

    TickJob(@Value("${example.instance-id:}") String instance, @Value("${example.work:300ms}") Duration work) {
        this.instance = instance.isBlank() ? "pid-" + ProcessHandle.current().pid() : instance;
        this.workMillis = work.toMillis();
    }

    /**
     * One tick. Cron {@code * * * * * *} fires at the start of every wall-clock second on every
     * instance, so all instances agree on which tick a run belongs to: the second nearest to now
     * (a fire a few milliseconds early or late still names the same tick).
     */
    @Scheduled(cron = "* * * * * *")
    @TurnstileLock(name = "${example.lock-name:example-tick}", lockAtMostFor = "3s", lockAtLeastFor = "500ms")
    public void tick() throws InterruptedException {
        long second = Math.round(System.currentTimeMillis() / 1000.0);
        long fence = JobContext.current().orElseThrow().fence();
        System.out.println("TICK " + second + " " + instance + " " + fence);
        System.out.flush();
        Thread.sleep(workMillis); // the work: pass the fence to whatever it writes, so a stale run is refused
    }

    String instance() {
        return instance;
    }
}
