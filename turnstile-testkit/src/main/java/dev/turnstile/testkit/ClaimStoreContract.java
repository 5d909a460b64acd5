package dev.turnstile.testkit;

import static dev.turnstile.testkit.TestTiming.ms;
import static dev.turnstile.testkit.TestTiming.sleep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import dev.turnstile.claim.Claim;
import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimLoss;
import dev.turnstile.claim.ClaimOutcome;
import dev.turnstile.claim.ClaimStore;
import dev.turnstile.claim.ClaimSummary;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.TaskClaimer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link ClaimStore} must pass. A store's test extends it and supplies a store
 * over a fresh task table, and ways to insert and read tasks. Each test uses its own table (a
 * random name), so tests running at the same time on the same server do not meet. Durations scale
 * with {@code -Dturnstile.test.timeScale}.
 *
 * <p>Past 400 lines for the reason {@code LockStoreContract} gives: a suite, one group per topic,
 * that every store's test runs whole.
 */
public abstract class ClaimStoreContract {
    private final List<AutoCloseable> opened = new ArrayList<>();
    private final List<ClaimTable> tables = new ArrayList<>();
    private final List<PartitionProxy> proxies = new ArrayList<>();
    private final List<Runnable> releases = new ArrayList<>();

    /**
     * Returns a new, independent store client over {@code table}, creating the table (and its
     * index) if it does not exist. Two calls stand for two processes.
     *
     * @param table the task table, default column names
     * @return a store client; the suite closes it after the test
     */
    protected abstract ClaimStore newStore(ClaimTable table);

    /**
     * Inserts free tasks ({@code lockedAt} at the epoch, version 0).
     *
     * @param table the task table
     * @param phase their phase
     * @param updatedAtMillis their {@code updatedAt}, epoch milliseconds
     * @param ids their keys
     */
    protected abstract void insertTasks(ClaimTable table, String phase, long updatedAtMillis, List<String> ids);

    /**
     * Reads a task's phase.
     *
     * @param table the task table
     * @param id the key
     * @return the phase
     */
    protected abstract String phaseOf(ClaimTable table, String id);

    /**
     * Reads a task's {@code lockedAt}.
     *
     * @param table the task table
     * @param id the key
     * @return epoch milliseconds
     */
    protected abstract long lockedAtOf(ClaimTable table, String id);

    /**
     * Drops a table the suite made. The default does nothing.
     *
     * @param table the task table
     */
    protected void dropTable(ClaimTable table) {}

    /**
     * Inserts a free task the way an application that leaves {@code updatedAt} out would. The
     * default inserts {@code updatedAt} 0, the epoch (what the shipped SQL DDL's {@code DEFAULT 0}
     * gives); a store where a left-out value is something else overrides it (MongoDB: no field).
     *
     * @param table the task table
     * @param phase its phase
     * @param id its key
     */
    protected void insertTaskWithoutUpdatedAt(ClaimTable table, String phase, String id) {
        insertTasks(table, phase, 0L, List.of(id));
    }

    /**
     * A store client whose connection to its server passes through a {@link PartitionProxy}.
     *
     * @param store the store client, over the proxy; the suite closes it after the test
     * @param proxy the proxy in front of the store's server; the suite releases and closes it
     */
    public record Partitionable(ClaimStore store, PartitionProxy proxy) {}

    /**
     * Returns a new store client over {@code table} whose connection to its server passes through
     * a new {@link PartitionProxy}, for the partition tests on the network; or null if the store has
     * no network connection to hold (an embedded database), and those tests are skipped (the
     * in-process variants still run). The default returns null.
     *
     * @param table the task table
     * @return the store and its proxy, or null
     */
    protected @Nullable Partitionable partitionableStore(ClaimTable table) {
        return null;
    }

    /**
     * Returns a fresh table description with a random name.
     *
     * @return the table
     */
    protected ClaimTable freshTable() {
        ClaimTable t = ClaimTable.builder("claim_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12)).build();
        tables.add(t);
        return t;
    }

    /**
     * Opens a store and a claimer over it, both closed after the test.
     *
     * @param table the task table
     * @param timeout the lock timeout
     * @param configure more settings, or null
     * @return the claimer
     */
    protected TaskClaimer claimer(ClaimTable table, Duration timeout,
            java.util.function.@Nullable UnaryOperator<TaskClaimer.Builder> configure) {
        ClaimStore store = newStore(table);
        opened.add(store);
        TaskClaimer.Builder b = TaskClaimer.builder(store).lockTimeout(timeout);
        TaskClaimer c = (configure == null ? b : configure.apply(b)).build();
        opened.add(0, c);
        return c;
    }

    /** Opens a claimer over a store the test made, both closed after the test. */
    private TaskClaimer claimer(ClaimStore store, Duration timeout,
            java.util.function.@Nullable UnaryOperator<TaskClaimer.Builder> configure) {
        opened.add(store);
        TaskClaimer.Builder b = TaskClaimer.builder(store).lockTimeout(timeout);
        TaskClaimer c = (configure == null ? b : configure.apply(b)).build();
        opened.add(0, c);
        return c;
    }

    @AfterEach
    void closeAll() throws Exception {
        for (PartitionProxy p : proxies) {
            p.release(); // held calls finish before their stores close
        }
        releases.forEach(Runnable::run);
        releases.clear();
        for (AutoCloseable c : opened) {
            c.close();
        }
        opened.clear();
        proxies.forEach(PartitionProxy::close);
        proxies.clear();
        for (ClaimTable t : tables) {
            dropTable(t);
        }
        tables.clear();
    }

    private static List<String> ids(String prefix, int n) {
        return IntStream.range(0, n).mapToObj(i -> prefix + i).collect(Collectors.toList());
    }

    @Test
    @DisplayName("a claimed task is not claimed again until the lock timeout has passed, then with a higher version")
    void claimHoldsUntilTimeout() {
        ClaimTable t = freshTable();
        TaskClaimer a = claimer(t, ms(600), null);
        TaskClaimer b = claimer(t, ms(600), null);
        insertTasks(t, "Deleting", System.currentTimeMillis(), List.of("g1"));
        Claim first = a.claimNext(ClaimFilter.where("phase", "Deleting")).orElseThrow();
        assertThat(first.id()).isEqualTo("g1");
        assertThat(first.isHeld()).isTrue();
        assertThat(b.claimNext(ClaimFilter.where("phase", "Deleting"))).isEmpty();
        sleep(800);
        Claim second = b.claimNext(ClaimFilter.where("phase", "Deleting")).orElseThrow();
        assertThat(second.version()).isGreaterThan(first.version());
        assertThat(first.isHeld()).isFalse();
    }

    @Test
    @DisplayName("claims follow lockedAt then updatedAt, and only tasks that match the filter")
    void orderAndFilter() {
        ClaimTable t = freshTable();
        TaskClaimer c = claimer(t, Duration.ofMinutes(1), null);
        long now = System.currentTimeMillis();
        insertTasks(t, "Deleting", now - 1000, List.of("b"));
        insertTasks(t, "Deleting", now - 3000, List.of("a"));
        insertTasks(t, "Deleting", now - 500, List.of("c"));
        insertTasks(t, "Creating", now - 9000, List.of("x"));
        List<String> order = new ArrayList<>();
        for (Optional<Claim> next = c.claimNext(ClaimFilter.where("phase", "Deleting")); next.isPresent();
                next = c.claimNext(ClaimFilter.where("phase", "Deleting"))) {
            order.add(next.get().id());
        }
        assertThat(order).containsExactly("a", "b", "c");
        assertThat(c.claimNext(ClaimFilter.where("phase", "Creating")).orElseThrow().id()).isEqualTo("x");
    }

    @Test
    @DisplayName("a batch claims up to N distinct tasks in one step")
    void batch() {
        ClaimTable t = freshTable();
        TaskClaimer c = claimer(t, Duration.ofMinutes(1), null);
        insertTasks(t, "Deleting", System.currentTimeMillis(), ids("t", 10));
        List<Claim> first = c.claim(ClaimFilter.where("phase", "Deleting"), 4);
        List<Claim> rest = c.claim(ClaimFilter.where("phase", "Deleting"), 100);
        assertThat(first).hasSize(4);
        assertThat(rest).hasSize(6);
        Set<String> all = new HashSet<>();
        first.forEach(x -> all.add(x.id()));
        rest.forEach(x -> all.add(x.id()));
        assertThat(all).hasSize(10);
        assertThat(c.claim(ClaimFilter.where("phase", "Deleting"), 100)).isEmpty();
    }

    @Test
    @DisplayName("summarize counts each phase's free, claimed and overdue tasks by the store's clock")
    void summaryCounts() {
        ClaimTable t = freshTable();
        TaskClaimer longLease = claimer(t, Duration.ofMinutes(1), null);
        TaskClaimer shortLease = claimer(t, ms(300), null);
        long now = System.currentTimeMillis();
        insertTasks(t, "Creating", now, ids("c", 3));
        insertTasks(t, "Deleting", now, ids("d", 2));
        assertThat(longLease.claimNext(ClaimFilter.where("phase", "Creating"))).isPresent();
        Claim lapsing = shortLease.claimNext(ClaimFilter.where("phase", "Deleting")).orElseThrow();
        sleep(600);
        ClaimSummary s = longLease.store().summarize(ms(300), Duration.ofHours(1), 10);
        assertThat(s.phases()).extracting(ClaimSummary.PhaseCounts::phase).containsExactly("Creating", "Deleting");
        ClaimSummary.PhaseCounts creating = s.phases().get(0);
        // with a 300 ms timeout, the claim taken a moment ago under a minute's is overdue by now
        assertThat(List.of(creating.total(), creating.free(), creating.claimed(), creating.overdue())).containsExactly(3L, 2L, 0L, 1L);
        ClaimSummary.PhaseCounts deleting = s.phases().get(1);
        assertThat(List.of(deleting.total(), deleting.free(), deleting.claimed(), deleting.overdue())).containsExactly(2L, 1L, 0L, 1L);
        assertThat(deleting.oldestOverdueSince()).isEqualTo(lapsing.lockedAt().plus(ms(300)));
        ClaimSummary byMinute = longLease.store().summarize(Duration.ofMinutes(1), Duration.ofHours(1), 10);
        ClaimSummary.PhaseCounts c = byMinute.phases().get(0);
        assertThat(List.of(c.free(), c.claimed(), c.overdue())).containsExactly(2L, 1L, 0L);
        assertThat(c.oldestOverdueSince()).isNull();
        assertThat(byMinute.morePhases()).isFalse();
        assertThat(byMinute.stuck()).isEmpty();
    }

    @Test
    @DisplayName("summarize lists the tasks without progress for stuckAfter, the longest first; free and fresh ones are not stuck")
    void summaryStuck() {
        ClaimTable t = freshTable();
        TaskClaimer c = claimer(t, Duration.ofMinutes(1), null);
        long now = System.currentTimeMillis();
        insertTasks(t, "Deleting", now - 3_600_000, List.of("oldest"));
        insertTasks(t, "Deleting", now - 1_800_000, List.of("older"));
        insertTasks(t, "Deleting", now - 5_000, List.of("fresh"));
        insertTasks(t, "Idle", now - 7_200_000, List.of("free-and-old"));
        Map<String, Claim> claimed = new java.util.HashMap<>();
        c.claim(ClaimFilter.where("phase", "Deleting"), 10).forEach(x -> claimed.put(x.id(), x));
        assertThat(claimed).hasSize(3);
        ClaimSummary s = c.store().summarize(Duration.ofMinutes(1), Duration.ofMinutes(10), 10);
        assertThat(s.stuck()).extracting(ClaimSummary.StuckTask::keyText).containsExactly("oldest", "older");
        ClaimSummary.StuckTask oldest = s.stuck().get(0);
        assertThat(oldest.phase()).isEqualTo("Deleting");
        Claim oldestClaim = Objects.requireNonNull(claimed.get("oldest"));
        assertThat(oldest.version()).isEqualTo(oldestClaim.version());
        assertThat(oldest.lockedAt()).isEqualTo(oldestClaim.lockedAt());
        assertThat(Math.abs(oldest.updatedAt().toEpochMilli() - (now - 3_600_000))).isLessThan(1000);
        assertThat(c.store().summarize(Duration.ofMinutes(1), Duration.ofMinutes(10), 1).stuck()).hasSize(1);
        assertThat(c.store().summarize(Duration.ofMinutes(1), Duration.ofMinutes(10), 0).stuck()).isEmpty();
        assertThatThrownBy(() -> c.store().summarize(Duration.ZERO, Duration.ofMinutes(1), 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock timeout");
        assertThatThrownBy(() -> c.store().summarize(Duration.ofMinutes(1), Duration.ofMinutes(1), 1001))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxStuck");
    }

    @Test
    @DisplayName("release frees a stuck claim as the summary showed it: due at once, the holder's writes are LOST, updatedAt kept; a stale version, progress or an unlock meanwhile changes nothing")
    void releaseCutsTheClaim() {
        ClaimTable t = freshTable();
        TaskClaimer a = claimer(t, Duration.ofMinutes(1), null);
        TaskClaimer b = claimer(t, Duration.ofMinutes(1), null);
        long updated = System.currentTimeMillis() - 3_600_000;
        insertTasks(t, "Deleting", updated, List.of("g"));
        Claim held = a.claimNext(ClaimFilter.where("phase", "Deleting")).orElseThrow();
        var loss = held.lost().toCompletableFuture();
        ClaimSummary.StuckTask stuck = a.store().summarize(Duration.ofMinutes(1), Duration.ofMinutes(10), 10).stuck().get(0);
        assertThat(a.store().release(new ClaimSummary.StuckTask(stuck.key(), stuck.phase(), stuck.lockedAt(), stuck.updatedAt(),
                stuck.version() - 1))).as("a version the task is not at").isFalse();
        assertThat(a.store().release(new ClaimSummary.StuckTask(stuck.key(), stuck.phase(), stuck.lockedAt(),
                stuck.updatedAt().plusMillis(1), stuck.version()))).as("progress made since the summary").isFalse();
        assertThat(b.claimNext(ClaimFilter.where("phase", "Deleting"))).isEmpty();
        assertThat(a.store().release(stuck)).isTrue();
        assertThat(a.store().release(stuck)).as("released once only").isFalse();
        assertThat(lockedAtOf(t, "g")).isZero();
        assertThat(held.heartbeat()).isEqualTo(ClaimOutcome.LOST);
        assertThat(held.update(Map.of("phase", "StaleWrite"))).isEqualTo(ClaimOutcome.LOST);
        assertThat(loss).succeedsWithin(Duration.ofSeconds(5));
        Claim taken = b.claimNext(ClaimFilter.where("phase", "Deleting")).orElseThrow();
        assertThat(taken.version()).isGreaterThan(stuck.version() + 1);
        ClaimSummary after = a.store().summarize(Duration.ofMinutes(1), Duration.ofMinutes(10), 10);
        ClaimSummary.StuckTask retaken = after.stuck().get(0);
        assertThat(after.stuck()).singleElement().satisfies(x -> {
            assertThat(x.version()).isEqualTo(taken.version());
            assertThat(Math.abs(x.updatedAt().toEpochMilli() - updated)).as("no progress was recorded").isLessThan(1000);
        });
        assertThat(phaseOf(t, "g")).isEqualTo("Deleting");
        assertThat(taken.unlock()).isEqualTo(ClaimOutcome.APPLIED);
        assertThat(a.store().release(retaken)).as("unlocked meanwhile, at the same version: the unlock wins").isFalse();
        assertThat(lockedAtOf(t, "g")).isZero();
        Claim again = b.claimNext(ClaimFilter.where("phase", "Deleting")).orElseThrow();
        assertThat(again.version()).as("the refused release raised nothing").isEqualTo(taken.version() + 1);
    }

    @Test
    @DisplayName("unlock makes the task due at once; moveTo sets the phase and makes it due at once in the new phase")
    void unlockAndMoveTo() {
        ClaimTable t = freshTable();
        TaskClaimer c = claimer(t, Duration.ofMinutes(1), null);
        insertTasks(t, "Deleting", System.currentTimeMillis(), List.of("g"));
        Claim claim = c.claimNext(ClaimFilter.where("phase", "Deleting")).orElseThrow();
        assertThat(claim.unlock()).isEqualTo(ClaimOutcome.APPLIED);
        assertThat(lockedAtOf(t, "g")).isZero();
        assertThatThrownBy(claim::unlock).isInstanceOf(IllegalStateException.class).hasMessageContaining("already ended");
        Claim again = c.claimNext(ClaimFilter.where("phase", "Deleting")).orElseThrow();
        assertThat(again.moveTo("Deleted")).isEqualTo(ClaimOutcome.APPLIED);
        assertThat(phaseOf(t, "g")).isEqualTo("Deleted");
        assertThat(c.claimNext(ClaimFilter.where("phase", "Deleting"))).isEmpty();
        assertThat(c.claimNext(ClaimFilter.where("phase", "Deleted"))).isPresent();
    }

    @Test
    @DisplayName("a stalled worker's late writes are rejected as LOST once another worker claimed the task")
    void stalledWorkerRejected() throws Exception {
        ClaimTable t = freshTable();
        TaskClaimer a = claimer(t, ms(400), null);
        TaskClaimer b = claimer(t, ms(400), null);
        insertTasks(t, "Deleting", System.currentTimeMillis(), List.of("g"));
        Claim stalled = a.claimNext(ClaimFilter.where("phase", "Deleting")).orElseThrow();
        var loss = stalled.lost().toCompletableFuture();
        sleep(600);
        Claim fresh = b.claimNext(ClaimFilter.where("phase", "Deleting")).orElseThrow();
        assertThat(stalled.update(Map.of("phase", "StaleWrite"))).isEqualTo(ClaimOutcome.LOST);
        assertThat(stalled.moveTo("StaleDone")).isEqualTo(ClaimOutcome.LOST);
        assertThat(stalled.unlock()).isEqualTo(ClaimOutcome.LOST);
        assertThat(phaseOf(t, "g")).isEqualTo("Deleting");
        ClaimLoss l = loss.get(5, TimeUnit.SECONDS);
        assertThat(l.id()).isEqualTo("g");
        assertThat(fresh.moveTo("Deleted")).isEqualTo(ClaimOutcome.APPLIED);
        assertThat(phaseOf(t, "g")).isEqualTo("Deleted");
    }

    @Test
    @DisplayName("relock: due after a tenth of the time waited since updatedAt, clamped between the floor and the timeout")
    void relockBackoff() {
        ClaimTable t = freshTable();
        Duration timeout = Duration.ofMinutes(1);
        TaskClaimer c = claimer(t, timeout, b -> b.relockFloor(Duration.ofSeconds(1)));
        long now = System.currentTimeMillis();
        insertTasks(t, "Waiting", now - 50_000, List.of("tenth"));
        insertTasks(t, "Waiting", now, List.of("floor"));
        insertTasks(t, "Waiting", now - 10L * 24 * 3600 * 1000, List.of("ceiling"));
        Map<String, Long> expected = Map.of("tenth", 5_000L, "floor", 1_000L, "ceiling", timeout.toMillis());
        for (Claim claim : c.claim(ClaimFilter.where("phase", "Waiting"), 3)) {
            long before = System.currentTimeMillis();
            assertThat(claim.relock()).isEqualTo(ClaimOutcome.APPLIED);
            long after = System.currentTimeMillis();
            long due = lockedAtOf(t, claim.id()) + timeout.toMillis();
            long delay = Objects.requireNonNull(expected.get(claim.id()), "a task this test inserted");
            assertThat(due).as("due time of %s", claim.id()).isBetween(before + delay - 1500, after + delay + 1500);
        }
        assertThat(c.claimNext(ClaimFilter.where("phase", "Waiting"))).isEmpty();
    }

    @Test
    @DisplayName("relock at the floor: the task is not due before the floor, and is due after it")
    void relockFloorSpacing() {
        ClaimTable t = freshTable();
        TaskClaimer c = claimer(t, ms(5000), b -> b.relockFloor(ms(500)));
        insertTasks(t, "Waiting", System.currentTimeMillis(), List.of("w"));
        List<Long> claimedAt = new ArrayList<>();
        long start = System.nanoTime();
        while (claimedAt.size() < 3 && System.nanoTime() - start < ms(5000).toNanos()) {
            Optional<Claim> claim = c.claimNext(ClaimFilter.where("phase", "Waiting"));
            if (claim.isPresent()) {
                claimedAt.add(System.nanoTime());
                claim.get().relock();
            }
            sleep(20);
        }
        assertThat(claimedAt).hasSize(3);
        for (int i = 1; i < claimedAt.size(); i++) {
            long gapMs = (claimedAt.get(i) - claimedAt.get(i - 1)) / 1_000_000;
            assertThat(gapMs).as("gap between retries").isBetween(ms(450).toMillis(), ms(1500).toMillis());
        }
    }

    @Test
    @DisplayName("keep-alive holds a claim past the lock timeout; without it the loss is reported at the deadline")
    void keepAliveAndLoss() throws Exception {
        ClaimTable t = freshTable();
        TaskClaimer kept = claimer(t, ms(600), b -> b.keepAlive(ms(150)));
        TaskClaimer other = claimer(t, ms(600), null);
        insertTasks(t, "Long", System.currentTimeMillis(), List.of("k", "u"));
        Claim held = kept.claimNext(ClaimFilter.where("phase", "Long")).orElseThrow();
        Claim unkept = other.claimNext(ClaimFilter.where("phase", "Long")).orElseThrow();
        var loss = unkept.lost().toCompletableFuture();
        sleep(1500);
        assertThat(held.isHeld()).isTrue();
        assertThat(unkept.isHeld()).isFalse();
        assertThat(loss.get(5, TimeUnit.SECONDS).reason()).contains("lock timeout passed");
        Claim retaken = other.claimNext(ClaimFilter.where("phase", "Long")).orElseThrow();
        assertThat(retaken.id()).isEqualTo(unkept.id());
        assertThat(unkept.heartbeat()).isEqualTo(ClaimOutcome.LOST);
        assertThat(held.moveTo("Done")).isEqualTo(ClaimOutcome.APPLIED);
    }

    @Test
    @DisplayName("unlock, moveTo and close on an interrupted thread are applied, and the thread stays interrupted")
    void endingWritesOnAnInterruptedThread() throws Exception {
        // how a step's finally runs after an executor's shutdownNow
        ClaimTable t = freshTable();
        TaskClaimer c = claimer(t, Duration.ofMinutes(1), b -> b.relockFloor(ms(300)));
        insertTasks(t, "Deleting", System.currentTimeMillis(), List.of("u", "m", "c"));
        List<Claim> claims = c.claim(ClaimFilter.where("phase", "Deleting"), 3);
        assertThat(claims).hasSize(3);
        List<Object> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread worker = new Thread(() -> {
            Thread.currentThread().interrupt();
            try {
                seen.add(claims.get(0).unlock());
                seen.add(Thread.currentThread().isInterrupted());
                seen.add(claims.get(1).moveTo("Deleted"));
                seen.add(Thread.currentThread().isInterrupted());
                claims.get(2).close();
                seen.add(Thread.currentThread().isInterrupted());
            } catch (RuntimeException | Error e) {
                seen.add(e);
            }
        }, "interrupted-worker");
        worker.start();
        worker.join(30_000);
        assertThat(seen).containsExactly(ClaimOutcome.APPLIED, true, ClaimOutcome.APPLIED, true, true);
        assertThat(lockedAtOf(t, claims.get(0).id())).as("unlocked").isZero();
        assertThat(phaseOf(t, claims.get(1).id())).isEqualTo("Deleted");
        String closed = claims.get(2).id();
        await("relocked by close: due after the floor, not the lock timeout").atMost(ms(5000))
                .until(() -> c.claim(ClaimFilter.where("phase", "Deleting"), 10).stream().anyMatch(x -> x.id().equals(closed)));
    }

    @Test
    @DisplayName("unlock and moveTo interrupted at a random moment during the call are still applied")
    void endingWritesInterruptedDuringTheCall() throws Exception {
        ClaimTable t = freshTable();
        TaskClaimer c = claimer(t, Duration.ofMinutes(1), null);
        List<String> ids = ids("cut", 30);
        insertTasks(t, "Deleting", System.currentTimeMillis(), ids);
        java.util.Random random = new java.util.Random();
        for (int round = 0; round < ids.size(); round++) {
            Claim claim = c.claimNext(ClaimFilter.where("phase", "Deleting")).orElseThrow();
            boolean move = round % 2 == 0;
            java.util.concurrent.CompletableFuture<Object> done = new java.util.concurrent.CompletableFuture<>();
            Thread worker = new Thread(() -> {
                try {
                    done.complete(move ? claim.moveTo("Deleted") : claim.unlock());
                } catch (RuntimeException | Error e) {
                    done.complete(e);
                }
            }, "cut-worker-" + round);
            worker.start();
            java.util.concurrent.locks.LockSupport.parkNanos(random.nextInt(2_000_000));
            worker.interrupt();
            assertThat(done.get(30, java.util.concurrent.TimeUnit.SECONDS)).as("round %d", round).isEqualTo(ClaimOutcome.APPLIED);
            if (move) {
                assertThat(phaseOf(t, claim.id())).as("round %d: moved", round).isEqualTo("Deleted");
            } else {
                assertThat(lockedAtOf(t, claim.id())).as("round %d: unlocked", round).isZero();
            }
        }
    }

    @Test
    @DisplayName("close() relocks a claim the step did not end, so a failed step is retried after the backoff")
    void closeRelocks() {
        ClaimTable t = freshTable();
        TaskClaimer c = claimer(t, Duration.ofMinutes(1), b -> b.relockFloor(ms(300)));
        insertTasks(t, "Deleting", System.currentTimeMillis(), List.of("g"));
        try (Claim claim = c.claimNext(ClaimFilter.where("phase", "Deleting")).orElseThrow()) {
            assertThat(claim.isHeld()).isTrue();
        }
        assertThat(c.claimNext(ClaimFilter.where("phase", "Deleting"))).isEmpty();
        await().atMost(ms(3000)).until(() -> c.claimNext(ClaimFilter.where("phase", "Deleting")).isPresent());
    }

    @Test
    @DisplayName("bad input: an undeclared filter column, a bad batch size, a bad column in a write")
    @SuppressWarnings("NullAway") // passes a null filter on purpose, to see it rejected
    void badInput() {
        ClaimTable t = freshTable();
        TaskClaimer c = claimer(t, Duration.ofMinutes(1), null);
        assertThatThrownBy(() -> c.claimNext(ClaimFilter.where("tenant", "x")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a filter column");
        assertThatThrownBy(() -> c.claim(ClaimFilter.all(), 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("between 1 and");
        assertThatThrownBy(() -> c.claimNext(null)).isInstanceOf(IllegalArgumentException.class);
        insertTasks(t, "P", System.currentTimeMillis(), List.of("g"));
        Claim claim = c.claimNext(ClaimFilter.all()).orElseThrow();
        assertThatThrownBy(() -> claim.update(Map.of("phase; DROP TABLE x", "y")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not an identifier");
        assertThatThrownBy(() -> claim.update(Map.of("locked_at", 5L)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("claiming writes it itself");
        assertThat(claim.unlock()).isEqualTo(ClaimOutcome.APPLIED);
    }

    @Test
    @DisplayName("many tasks, many workers: no task is worked by two workers at once, every step applied once")
    void manyWorkersNoOverlap() throws Exception {
        ClaimTable t = freshTable();
        int tasks = 60;
        int workers = 8;
        List<String> phases = List.of("Releasing", "DeletingRecords", "MarkingDeleted", "Deleted");
        List<TaskClaimer> claimers = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            claimers.add(claimer(t, ms(10_000), null));
        }
        insertTasks(t, phases.get(0), System.currentTimeMillis(), ids("task", tasks));
        Map<String, AtomicInteger> inside = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> steps = new ConcurrentHashMap<>();
        AtomicInteger overlaps = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(workers);
        try {
            List<Future<?>> running = new ArrayList<>();
            for (TaskClaimer claimer : claimers) {
                running.add(pool.submit(() -> {
                    int idle = 0;
                    while (idle < 30) {
                        boolean worked = false;
                        for (int p = 0; p < phases.size() - 1; p++) {
                            int batch = 1 + ThreadLocalRandom.current().nextInt(3);
                            for (Claim claim : claimer.claim(ClaimFilter.where("phase", phases.get(p)), batch)) {
                                worked = true;
                                AtomicInteger in = inside.computeIfAbsent(claim.id(), k -> new AtomicInteger());
                                if (in.incrementAndGet() > 1) {
                                    overlaps.incrementAndGet();
                                }
                                java.util.concurrent.locks.LockSupport.parkNanos(300_000); // the "work"
                                in.decrementAndGet();
                                if (claim.moveTo(phases.get(p + 1)) == ClaimOutcome.APPLIED) {
                                    steps.computeIfAbsent(claim.id(), k -> new AtomicInteger()).incrementAndGet();
                                }
                            }
                        }
                        idle = worked ? 0 : idle + 1;
                        if (!worked) {
                            sleep(5);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : running) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(overlaps).hasValue(0);
        for (String id : ids("task", tasks)) {
            assertThat(phaseOf(t, id)).as("phase of %s", id).isEqualTo("Deleted");
            assertThat(steps.get(id)).as("steps of %s", id).hasValue(phases.size() - 1);
        }
    }

    @Test
    @DisplayName("relock of a task inserted without updatedAt, or with it at the epoch, waits the floor: nothing was waited yet")
    void relockWithoutUpdatedAt() {
        ClaimTable t = freshTable();
        Duration timeout = Duration.ofMinutes(1);
        Duration floor = Duration.ofSeconds(2);
        TaskClaimer c = claimer(t, timeout, b -> b.relockFloor(floor));
        insertTaskWithoutUpdatedAt(t, "Waiting", "missing");
        insertTasks(t, "Waiting", 0L, List.of("epoch"));
        List<Claim> claims = c.claim(ClaimFilter.where("phase", "Waiting"), 2);
        assertThat(claims).hasSize(2);
        for (Claim claim : claims) {
            long before = System.currentTimeMillis();
            assertThat(claim.relock()).isEqualTo(ClaimOutcome.APPLIED);
            long after = System.currentTimeMillis();
            long due = lockedAtOf(t, claim.id()) + timeout.toMillis();
            assertThat(due).as("due time of %s (floor %s ms, lock timeout %s ms)", claim.id(), floor.toMillis(), timeout.toMillis())
                    .isBetween(before + floor.toMillis() - 1000, after + floor.toMillis() + 1000);
        }
    }

    // ---- a store call that hangs: a partition that holds the bytes with the sockets open -------

    /** A's store, how the test holds its calls, and how it lets them go on. */
    private record Partition(HoldingClaimStore store, Runnable hold, Runnable release) {}

    /** The calls wait in this process, at a gate in front of the real store. */
    private Partition inProcess(ClaimTable t) {
        HoldingClaimStore store = new HoldingClaimStore(newStore(t));
        releases.add(store::release);
        return new Partition(store, store::hold, store::release);
    }

    /** The calls' bytes are held on the network, by the subclass's proxy; skipped if it has none. */
    private Partition onTheNetwork(ClaimTable t) {
        Partitionable maybe = partitionableStore(t);
        Assumptions.assumeTrue(maybe != null, "the store has no network connection to hold");
        Partitionable p = Objects.requireNonNull(maybe, "assumed above");
        proxies.add(p.proxy());
        HoldingClaimStore store = new HoldingClaimStore(p.store()); // its gate stays open: it counts heartbeats in flight
        return new Partition(store, p.proxy()::hold, p.proxy()::release);
    }

    @Test
    @DisplayName("a keep-alive hanging in this process: lost() completes before another worker can claim the task; isHeld() and lost() answer at once")
    void lossBeforeTakeoverWhileHeartbeatHangsInProcess() throws Exception {
        ClaimTable t = freshTable();
        lossBeforeTakeover(t, inProcess(t));
    }

    @Test
    @DisplayName("a keep-alive hanging on a partitioned network (bytes held, sockets open): lost() completes before another worker can claim the task")
    void lossBeforeTakeoverWhileHeartbeatHangsOnTheNetwork() throws Exception {
        ClaimTable t = freshTable();
        lossBeforeTakeover(t, onTheNetwork(t));
    }

    @Test
    @DisplayName("a keep-alive hanging in this process and confirmed after the loss does not revive the claim")
    void lateHeartbeatDoesNotReviveInProcess() throws Exception {
        ClaimTable t = freshTable();
        noRevival(t, inProcess(t));
    }

    @Test
    @DisplayName("a keep-alive held on a partitioned network and confirmed after the loss does not revive the claim")
    void lateHeartbeatDoesNotReviveOnTheNetwork() throws Exception {
        ClaimTable t = freshTable();
        noRevival(t, onTheNetwork(t));
    }

    private static final Duration PARTITION_TIMEOUT = ms(1500);
    private static final Duration PARTITION_KEEP_ALIVE = ms(300);

    /**
     * Worker A keeps a claim alive; its store calls are held (a heartbeat hangs); worker B polls
     * for the task. A must be told before B's claim of the task can succeed, and asking A whether
     * it holds the task must not wait for the hanging heartbeat.
     */
    private void lossBeforeTakeover(ClaimTable t, Partition partition) throws Exception {
        TaskClaimer a = claimer(partition.store(), PARTITION_TIMEOUT, b -> b.keepAlive(PARTITION_KEEP_ALIVE));
        TaskClaimer b = claimer(t, PARTITION_TIMEOUT, null);
        insertTasks(t, "Held", System.currentTimeMillis(), List.of("g"));
        Claim claim = a.claimNext(ClaimFilter.where("phase", "Held")).orElseThrow();
        AtomicLong lostAt = new AtomicLong();
        AtomicReference<ClaimLoss> loss = new AtomicReference<>();
        claim.lost().thenAccept(l -> {
            loss.set(l);
            lostAt.set(System.nanoTime());
        });
        sleep(700); // keep-alives go through
        assertThat(claim.isHeld()).isTrue();
        ExecutorService probe = Executors.newSingleThreadExecutor();
        Claim taken = null;
        partition.hold().run();
        long heldAt = System.nanoTime();
        try {
            await().atMost(PARTITION_KEEP_ALIVE.multipliedBy(4)).until(() -> partition.store().heartbeatsInFlight() > 0);
            Future<Long> took = probe.submit(() -> {
                long s = System.nanoTime();
                claim.isHeld();
                claim.lost();
                claim.isHeld();
                return System.nanoTime() - s;
            });
            try {
                assertThat(took.get(PARTITION_TIMEOUT.toMillis() * 2, TimeUnit.MILLISECONDS) / 1_000_000)
                        .as("ms that isHeld() and lost() took while a heartbeat hung").isLessThan(ms(200).toMillis());
            } catch (TimeoutException e) {
                fail("isHeld() or lost() waited for the hanging heartbeat (no answer after "
                        + PARTITION_TIMEOUT.toMillis() * 2 + " ms)");
            }
            long takenStart = 0;
            while (taken == null && System.nanoTime() - heldAt < PARTITION_TIMEOUT.toNanos() * 3) {
                long s = System.nanoTime();
                Optional<Claim> c = b.claimNext(ClaimFilter.where("phase", "Held"));
                if (c.isPresent()) {
                    taken = c.get();
                    takenStart = s;
                } else {
                    LockSupport.parkNanos(5_000_000L);
                }
            }
            assertThat(taken).as("another worker's claim once A's lock timeout passed").isNotNull();
            await().atMost(ms(2000)).until(() -> lostAt.get() != 0);
            assertThat((takenStart - lostAt.get()) / 1_000_000.0)
                    .as("ms from A's lost() completing to the start of B's successful claim").isPositive();
            // lost() completed (lostAt is set): loss was set just before
            assertThat(Objects.requireNonNull(loss.get(), "loss").reason()).contains("lock timeout passed");
            assertThat(claim.isHeld()).isFalse();
            assertThat(partition.store().heartbeatsInFlight()).as("A's heartbeat still hangs").isPositive();
        } finally {
            partition.release().run();
            probe.shutdownNow();
        }
        // The held heartbeat reaches the store now and is refused: B's claim raised the version.
        await().atMost(ms(20_000)).until(() -> partition.store().heartbeatsInFlight() == 0);
        assertThat(claim.isHeld()).isFalse();
        assertThat(claim.heartbeat()).isEqualTo(ClaimOutcome.LOST);
        assertThat(Objects.requireNonNull(taken, "asserted not null above").moveTo("Done")).isEqualTo(ClaimOutcome.APPLIED);
        assertThat(phaseOf(t, "g")).isEqualTo("Done");
    }

    /**
     * Worker A's heartbeat is held past A's deadline while no one else claims the task, then goes
     * through and is applied by the store: A was told of the loss, so the claim must stay lost.
     */
    private void noRevival(ClaimTable t, Partition partition) throws Exception {
        TaskClaimer a = claimer(partition.store(), PARTITION_TIMEOUT, b -> b.keepAlive(PARTITION_KEEP_ALIVE));
        insertTasks(t, "Held", System.currentTimeMillis(), List.of("g"));
        Claim claim = a.claimNext(ClaimFilter.where("phase", "Held")).orElseThrow();
        CompletableFuture<ClaimLoss> lost = claim.lost().toCompletableFuture();
        sleep(700);
        partition.hold().run();
        long heldAt = System.nanoTime();
        try {
            await().atMost(PARTITION_KEEP_ALIVE.multipliedBy(4)).until(() -> partition.store().heartbeatsInFlight() > 0);
            try {
                lost.get(PARTITION_TIMEOUT.toMillis() + ms(1000).toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                fail("lost() did not complete at the deadline while a heartbeat hung");
            }
            // The last confirmed heartbeat was sent before the hold: the deadline is within one timeout of it.
            assertThat((System.nanoTime() - heldAt) / 1_000_000).as("ms from the hold to the loss")
                    .isLessThan(PARTITION_TIMEOUT.toMillis());
            assertThat(claim.isHeld()).isFalse();
        } finally {
            partition.release().run();
        }
        long releasedAt = System.currentTimeMillis();
        await().atMost(ms(20_000)).until(() -> partition.store().heartbeatsInFlight() == 0);
        assertThat(lockedAtOf(t, "g")).as("the held heartbeat was applied by the store after the loss")
                .isGreaterThanOrEqualTo(releasedAt - 100);
        assertThat(claim.isHeld()).as("a heartbeat confirmed after the loss revived the claim").isFalse();
        long lockedAt = lockedAtOf(t, "g");
        Thread.sleep(PARTITION_KEEP_ALIVE.toMillis() * 3);
        assertThat(claim.isHeld()).isFalse();
        assertThat(lockedAtOf(t, "g")).as("no keep-alive after the loss").isEqualTo(lockedAt);
        assertThat(claim.heartbeat()).as("a heartbeat after the loss").isEqualTo(ClaimOutcome.LOST);
        assertThat(lockedAtOf(t, "g")).as("nothing written by a heartbeat after the loss").isEqualTo(lockedAt);
    }
}
