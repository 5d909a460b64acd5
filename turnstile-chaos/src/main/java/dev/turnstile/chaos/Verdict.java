package dev.turnstile.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.Set;
import java.util.TreeSet;

/**
 * The pass criteria, applied to one scenario's checks, and the notes that say what a store cannot
 * promise with the measured figure.
 *
 * <ol>
 *   <li>0 fenced writes accepted out of order, on every store, under every fault.
 *   <li>Fences never go backwards on a store with safe fences (all but Redlock).
 *   <li>0 overlapping holds on single-node stores (SQL, Redis) under kill and partition, and also
 *       under no fault, latency, client clock jumps (except SQLite, whose only clock is the
 *       clients'), and a restart of a durable store. Under a pause, overlaps with the frozen holder
 *       are inherent (it cannot know it is frozen) and are noted; any other overlap fails. Where
 *       overlaps are not failed (Redis restart without persistence, Redlock, SQLite clock jumps),
 *       they are noted with the measured figure.
 *   <li>The lock is acquired again within TTL + one heartbeat + 1 s after its holder dies (kill,
 *       pause, partition).
 *   <li>Every lost lease is reported to its holder; a paused holder hears of it within one
 *       heartbeat + 1 s of running again, and its stale write is rejected.
 *   <li>The fault was injected, no worker crashed, and the lock was acquired after the last fault.
 * </ol>
 *
 * <p><b>Session stores (ZooKeeper).</b> These criteria apply unchanged, and none is loosened for
 * them. A ZooKeeper lease is reported lost at the latest when the session can no longer be proven
 * alive (SUSPENDED: the send time of the last answered request + the session timeout − a margin)
 * and at once on LOST; both reach the worker as {@code onLost}, which ends its hold, so the overlap
 * and silent-loss checks measure the promise of principle 8 exactly as they do for a TTL store. A
 * dead or frozen holder's lease ends at the earlier of its session's expiry (1 s in these runs)
 * and its TTL judged on the server's clock (node {@code mtime} + TTL), so the TTL-based recovery
 * and loss-notice limits bound it too. ZooKeeper syncs its log before it answers and an ensemble
 * agrees on every write by quorum, so it counts as a durable single store: any overlap not
 * involving a frozen holder fails, under a server restart, a server freeze and a leader loss as
 * well. For a leader loss, "the store came back" is the new leader's election.
 */
final class Verdict {
    final List<String> failures = new ArrayList<>();
    final List<String> notes = new ArrayList<>();

    private Verdict() {}

    /**
     * Whether the overlap is the regressing hold itself (its worker, fence and start: the acquire
     * that returned late) beside a hold of a fence above it, at most the highest issued before.
     */
    private static boolean overlapsHigherFence(OverlapChecker.Overlap o, FenceOrderChecker.Regression r) {
        return isRegressing(o.first(), r) && above(o.second(), r) || isRegressing(o.second(), r) && above(o.first(), r);
    }

    private static boolean isRegressing(History.Hold h, FenceOrderChecker.Regression r) {
        return h.worker() == r.acquire().worker() && h.fence() == r.acquire().fence() && h.start() == r.acquire().t();
    }

    private static boolean above(History.Hold h, FenceOrderChecker.Regression r) {
        return h.fence() > r.acquire().fence() && h.fence() <= r.highestBefore();
    }

    static Verdict judge(StoreSpec store, Fault fault, ChaosConfig config, History history, OverlapChecker.Result overlaps,
            FenceOrderChecker.Result fences, RecoveryChecker.Result recovery, LossNotificationChecker.Result losses,
            List<PausedHolderChecker.PauseCheck> pauses, List<String> problems) {
        Verdict v = new Verdict();
        v.failures.addAll(problems);

        // (b) order of accepted writes, and fences going backwards
        if (!fences.outOfOrder().isEmpty()) {
            v.failures.add(fences.outOfOrder().size() + " fenced writes accepted out of order, e.g. " + fences.outOfOrder().get(0));
        }
        if (store.safeFences()) {
            // Under a clock jump SQLite lets two clients hold at once (the limit noted under (a)):
            // each acquire commits its fence in turn, but the one that committed first can return
            // second, so the order of the returns is not the order of issue. Only that is excused: a
            // strictly lower fence whose holder overlapped another's hold. A repeated fence, or one
            // with no overlap to explain it, fails as anywhere else. The resource's log, in commit
            // order, still checks every fence (out of order, above).
            boolean clientClocks = fault instanceof Fault.ClockJump && !store.ownClock();
            // a fence two acquires returned is never a matter of order
            Map<Long, Long> returned = history.acquisitions().stream()
                    .collect(Collectors.groupingBy(Event::fence, Collectors.counting()));
            List<FenceOrderChecker.Regression> excused = clientClocks ? fences.regressions().stream()
                    .filter(r -> r.acquire().fence() < r.highestBefore() && returned.get(r.acquire().fence()) == 1
                            && overlaps.overlaps().stream().anyMatch(o -> overlapsHigherFence(o, r)))
                    .toList() : List.of();
            List<FenceOrderChecker.Regression> counted = fences.regressions().stream().filter(r -> !excused.contains(r)).toList();
            if (!excused.isEmpty()) {
                v.notes.add("SQLite has no clock of its own: two clients held at once and their acquires returned in "
                        + "another order than they committed, " + excused.size() + " times (e.g. " + excused.get(0)
                        + "); the resource's log, in commit order, had " + fences.outOfOrder().size() + " writes out of fence order");
            }
            if (!counted.isEmpty()) {
                v.failures.add("fences went backwards " + counted.size() + " times, e.g. " + counted.get(0));
            }
        } else {
            v.notes.add("Redlock: fences not safe (each node counts on its own; a grant's fence is the highest of its "
                    + "majority): " + fences.regressions().size() + " fence regressions in this run");
        }

        // (a) overlaps
        Set<Integer> paused = new TreeSet<>();
        history.ofType(Event.PAUSE).forEach(e -> paused.add(e.worker()));
        List<OverlapChecker.Overlap> counted = overlaps.notInvolving(paused);
        int inherent = overlaps.count() - counted.size();
        boolean mustBeZero = store.singleNode()
                && !(fault instanceof Fault.Failover)
                && (!(fault instanceof Fault.RestartStore) || store.durable())
                && (!(fault instanceof Fault.ClockJump) || store.ownClock());
        if (!counted.isEmpty()) {
            String what = counted.size() + " overlapping holds (longest " + ms(counted.stream()
                    .mapToDouble(OverlapChecker.Overlap::millis).max().orElse(0)) + "), e.g. " + counted.get(0);
            if (mustBeZero) {
                v.failures.add(what);
            } else if (fault instanceof Fault.Failover) {
                v.notes.add("Redis failover (asynchronous replication): the promoted replica had not seen the last writes: " + what);
            } else if (fault instanceof Fault.RestartStore) {
                v.notes.add("Redis without persistence: the restart forgot the holder: " + what);
            } else if (fault instanceof Fault.ClockJump && !store.ownClock()) {
                v.notes.add("SQLite has no clock of its own: expiry is judged by each process's wall clock, so a client "
                        + "whose clock jumped wrote or judged leases wrongly: " + what);
            } else {
                v.notes.add("Redlock (mutual exclusion not promised under faults): " + what);
            }
        } else if (fault instanceof Fault.RestartStore && !store.durable()) {
            v.notes.add("Redis without persistence: the restart forgot the holder, 0 overlaps measured this time "
                    + "(the old holder heard of it before anyone else took the lock)");
        }
        if (inherent > 0) {
            v.notes.add("paused holder believed it held the lock for " + ms(overlaps.overlaps().stream()
                    .filter(o -> paused.stream().anyMatch(o::involves)).mapToDouble(OverlapChecker.Overlap::millis).max().orElse(0))
                    + " after it was taken over (" + inherent + " overlaps, inherent: it was frozen); the fence rejected its write");
        }

        // (d) recovery
        double limit = config.recoveryLimit().toMillis();
        for (RecoveryChecker.Recovery r : recovery.recoveries()) {
            if (r.millis() > limit) {
                v.failures.add("after the " + r.fault() + " of worker " + r.victim() + " the lock was "
                        + (Double.isInfinite(r.millis()) ? "never acquired again" : "acquired again only after " + ms(r.millis()))
                        + " (limit " + ms(limit) + ")");
            }
        }

        // (e) losses
        for (LossNotificationChecker.SilentLoss s : losses.silent()) {
            v.failures.add("lease lost silently: " + s);
        }
        for (PausedHolderChecker.PauseCheck p : pauses) {
            if (!p.ok()) {
                v.failures.add(p.problem());
            }
        }

        // how far ahead of the takeover a cut-off holder was told (principle 8: act before the store does)
        for (Event cut : history.ofType(Event.PARTITION)) {
            History.Hold hold = history.holds().stream()
                    .filter(x -> x.worker() == cut.worker() && x.start() <= cut.t() && x.lostAt() > cut.t())
                    .findFirst().orElse(null);
            Event next = history.acquisitions().stream().filter(a -> a.worker() != cut.worker() && a.t() > cut.t())
                    .findFirst().orElse(null);
            if (hold != null && next != null) {
                v.notes.add(String.format("cut-off holder told of the loss %.0f ms %s the next holder acquired",
                        Math.abs(next.t() - hold.lostAt()) / 1e6, next.t() >= hold.lostAt() ? "before" : "AFTER"));
            }
        }

        // how long the lock was unusable after the store came back (reported, no limit: it includes the outage)
        for (RecoveryChecker.Recovery r : RecoveryChecker.check(history, Set.of(Event.STORE_UP, Event.NODES_UP)).recoveries()) {
            v.notes.add("first acquire " + ms(r.millis()) + " after the " + (r.fault().equals(Event.STORE_UP) ? "store" : "nodes")
                    + " came back");
        }
        for (Event jump : history.ofType(Event.CLOCK_JUMP)) {
            if (jump.detail() != null && !jump.detail().startsWith("+0")) {
                v.notes.add("worker " + jump.worker() + "'s wall clock jumped " + jump.detail());
            }
        }

        // liveness and worker health
        long lastFault = history.events().stream().filter(History::isHarnessEvent)
                .filter(e -> !e.type().equals(Event.STOP) && !e.type().equals(Event.SPAWN) && !e.type().equals(Event.DESTROY))
                .mapToLong(Event::t).max().orElse(Long.MIN_VALUE);
        long stopAt = history.ofType(Event.STOP).stream().mapToLong(Event::t).findFirst().orElse(Long.MAX_VALUE);
        if (history.acquisitions().stream().noneMatch(a -> a.t() > lastFault && a.t() < stopAt)) {
            v.failures.add("nobody acquired the lock after the fault");
        }
        long crashed = history.ofType(Event.ERROR).stream().filter(e -> e.detail() != null && e.detail().startsWith("worker failed")).count();
        if (crashed > 0) {
            v.failures.add(crashed + " workers crashed (see their logs)");
        }
        int destroyed = history.ofType(Event.DESTROY).size();
        if (destroyed > 0) {
            v.notes.add(destroyed + " workers did not stop within the grace period and were killed");
        }
        long errors = history.ofType(Event.ERROR).size() + history.ofType(Event.RELEASE).stream()
                .filter(e -> Event.FAILED.equals(e.outcome())).count();
        if (errors > 0) {
            v.notes.add(errors + " store errors reported to workers");
        }
        if (fences.failed() > 0) {
            v.notes.add(fences.failed() + " resource writes failed (resource unreachable)");
        }
        return v;
    }

    static String ms(double millis) {
        return Double.isInfinite(millis) ? "never" : String.format("%.0f ms", millis);
    }
}
