package dev.turnstile.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.ReleaseOutcome;
import dev.turnstile.spi.LockStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store decides {@code lockAtLeastFor} by its own clock, whatever the client's wall clock does
 * (issue 22, item 7). A holder in a child JVM ({@link ClockStepHolder}, under libfaketime) takes
 * the lock with keep-alive and {@code lockAtLeastFor}, its wall clock is stepped by an hour, it
 * extends on the stepped clock and releases; a client in this JVM (whose clock, like the server's,
 * is true) then tries the lock every 20 ms. Three holders run at once:
 *
 * <ul>
 *   <li>clock +1 h, release before {@code lockAtLeastFor}: the lock must stay taken until acquire
 *       plus {@code lockAtLeastFor} (not freed at once), and the release say
 *       {@code SHORTENED_TO_AT_LEAST};
 *   <li>clock −1 h, the same: the lock must be free then (not kept an hour);
 *   <li>clock −1 h, release after {@code lockAtLeastFor}: free at once, and the release say
 *       {@code RELEASED}.
 * </ul>
 *
 * <p>A store's test extends this and supplies the store: a URL the child opens and a client here.
 */
public abstract class ClockStepContract {
    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration AT_LEAST = Duration.ofSeconds(3);
    /** How far before acquire + lockAtLeastFor the lock may come free: ms rounding of stored times. */
    private static final long EARLY_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** How long after it the lock may still be taken: the observer's 20 ms tries on a loaded host. */
    private static final long LATE_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(1000);
    private static final long HOUR_MS = 3_600_000L;

    @TempDir
    Path dir;

    /**
     * Returns a URL that a child JVM can open with {@link dev.turnstile.spi.LockStores#open} to
     * reach the store under test.
     *
     * @return the store URL
     */
    protected abstract String storeUrl();

    /**
     * Returns a new client of the same store in this JVM, which watches the lock.
     *
     * @return a store client; the suite closes it
     */
    protected abstract LockStore newStore();

    /**
     * Tells whether the store's clock is the client's own (SQLite: the database is a file, and each
     * process judges time by its host's clock, which on a real host every process shares). Then a
     * holder whose clock alone runs an hour ahead sees its lease as over: its extend is refused,
     * it is told the lease is lost and its release says {@code ALREADY_EXPIRED}, while the others,
     * by their clocks, still see the lease until its TTL ends. The test expects that instead.
     *
     * @return {@code false} unless overridden
     */
    protected boolean storeClockIsTheClients() {
        return false;
    }

    @Test
    void lockAtLeastForFollowsTheStoresClockWhenTheClientsClockIsStepped() throws Exception {
        try (LockStore observer = newStore()) {
            observer.heldLocks(); // connected (and, for a store that creates its table, set up) before the holders start
            List<CompletableFuture<String>> runs = List.of(
                    CompletableFuture.supplyAsync(() -> scenario(observer, "+1h", HOUR_MS, false)),
                    CompletableFuture.supplyAsync(() -> scenario(observer, "-1h", -HOUR_MS, false)),
                    CompletableFuture.supplyAsync(() -> scenario(observer, "-1h", -HOUR_MS, true)));
            List<String> problems = new ArrayList<>();
            for (CompletableFuture<String> run : runs) {
                String problem = run.get(90, TimeUnit.SECONDS);
                if (problem != null) {
                    problems.add(problem);
                }
            }
            assertThat(problems).as("what the store did when the holder's wall clock was stepped").isEmpty();
        }
    }

    /** One holder's run; returns what went wrong, or null. */
    private @Nullable String scenario(LockStore observer, String step, long stepMs, boolean releaseLate) {
        String name = "clock-step-" + UUID.randomUUID();
        String what = "clock " + step + ", release " + (releaseLate ? "after" : "before") + " lockAtLeastFor "
                + AT_LEAST.toMillis() + " ms";
        try (ClockStepHolder h = ClockStepHolder.start(storeUrl(), name, TTL, AT_LEAST, dir)) {
            long before = System.nanoTime();
            h.acquire();
            long after = System.nanoTime();
            h.stepClock(step, stepMs);
            boolean extended = h.extend();
            long atLeastEnd = after + AT_LEAST.toNanos();
            if (storeClockIsTheClients() && stepMs > 0) {
                ReleaseOutcome outcome = h.release();
                Optional<Long> free = ClockStepHolder.firstFree(observer, name, atLeastEnd + LATE_SLACK_NANOS);
                if (extended || outcome != ReleaseOutcome.ALREADY_EXPIRED || free.isPresent()) {
                    return what + ": extend " + (extended ? "done" : "refused") + ", release said " + outcome + ", lock "
                            + (free.isPresent() ? "free " + (free.get() - before) / 1_000_000 + " ms after the acquire began"
                            : "still taken") + " (expected: extend refused, ALREADY_EXPIRED, still taken for others until its TTL)";
                }
                return null;
            }
            if (!extended) {
                return what + ": the store refused the extend after the step (the lease is the store's, by its clock)";
            }
            if (releaseLate) {
                TimeUnit.NANOSECONDS.sleep(atLeastEnd - System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300));
            } else if (System.nanoTime() - (atLeastEnd - TimeUnit.MILLISECONDS.toNanos(800)) > 0) {
                return what + ": the clock step and extend took too long to test an early release";
            }
            ReleaseOutcome outcome = h.release();
            long released = System.nanoTime();
            Optional<Long> free = ClockStepHolder.firstFree(observer, name,
                    (releaseLate ? released : atLeastEnd) + LATE_SLACK_NANOS + TimeUnit.MILLISECONDS.toNanos(500));
            String freeText = free.map(t -> "free " + (t - before) / 1_000_000 + " ms after the acquire began")
                    .orElse("still taken " + (System.nanoTime() - before) / 1_000_000 + " ms after the acquire began");
            String seen = what + ": release said " + outcome + ", lock " + freeText;
            ReleaseOutcome expected = releaseLate ? ReleaseOutcome.RELEASED : ReleaseOutcome.SHORTENED_TO_AT_LEAST;
            if (outcome != expected) {
                return seen + " (expected " + expected + ")";
            }
            if (free.isEmpty()) {
                return seen + " (expected free by " + ((releaseLate ? released : atLeastEnd) - before) / 1_000_000 + " ms)";
            }
            if (!releaseLate && free.get() - (before + AT_LEAST.toNanos() - EARLY_SLACK_NANOS) < 0) {
                return seen + " (expected taken until " + AT_LEAST.toMillis() + " ms after the acquire)";
            }
            long latest = (releaseLate ? released : atLeastEnd) + LATE_SLACK_NANOS;
            if (free.get() - latest > 0) {
                return seen + " (expected free by " + (latest - before) / 1_000_000 + " ms)";
            }
            return null;
        } catch (Exception | AssertionError e) {
            return what + ": " + e;
        }
    }
}
