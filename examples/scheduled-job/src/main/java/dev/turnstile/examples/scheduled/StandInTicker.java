package dev.turnstile.examples.scheduled;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStores;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** TEMPORARY plain-Java stand-in for the Spring app, to develop the three-JVM harness. */
public final class StandInTicker {
    public static void main(String[] args) throws Exception {
        String id = args[0], url = args[1], lock = args[2];
        Turnstile t = Turnstile.builder(LockStores.open(url)).build();
        LockOptions o = LockOptions.builder().lockAtMostFor(Duration.ofSeconds(3)).lockAtLeastFor(Duration.ofMillis(500)).build();
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor();
        t.heldLocks();
        System.out.println("READY " + id + " 0");
        Runnable[] tick = new Runnable[1];
        tick[0] = () -> {
            long now = System.currentTimeMillis();
            long second = Math.round(now / 1000.0);
            s.schedule(tick[0], 1000 - System.currentTimeMillis() % 1000, TimeUnit.MILLISECONDS);
            Optional<Lease> l = t.tryAcquire(lock, o);
            if (l.isPresent()) {
                System.out.println("TICK " + second + " " + id + " " + l.get().fence());
                System.out.flush();
                try { Thread.sleep(300); } catch (InterruptedException e) { return; }
                l.get().release();
            }
        };
        s.schedule(tick[0], 1000 - System.currentTimeMillis() % 1000, TimeUnit.MILLISECONDS);
        Thread.sleep(Long.MAX_VALUE);
    }
}
