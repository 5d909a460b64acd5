package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pass criteria applied to hand-made histories, through the same path a real run takes. */
class VerdictTest {
    static final ChaosConfig CONFIG = ChaosConfig.shortRun(Path.of("unused"));

    static ScenarioResult judge(String store, String fault, History h) {
        return Scenario.check(StoreSpec.named(store), Fault.named(fault), CONFIG, h, "mem", 3, List.of(), 0);
    }

    /** Worker 0 killed while holding fence 1; worker 1 takes over 2.1 s later. */
    static Histories killRun() {
        return new Histories().round(2, 1, 0, 900).acquired(0, 2, 1000).write(0, 2, Event.ACCEPTED, 1001)
                .harness(Event.KILL, 0, 1500).round(1, 3, 3600, 4500).round(2, 4, 4600, 5000);
    }

    @Test
    void aCleanKillRunPasses() {
        ScenarioResult r = judge("postgresql", "kill", killRun().build());
        assertThat(r.failures()).isEmpty();
        assertThat(r.passed()).isTrue();
        assertThat(r.acquisitions()).isEqualTo(4);
        assertThat(r.recovery().worstMillis()).isEqualTo(2100.0);
    }

    @Test
    void anOverlapUnderKillFailsOnASingleNodeStore() {
        History h = killRun().round(2, 5, 3700, 4000).build();
        ScenarioResult r = judge("redis", "kill", h);
        assertThat(r.passed()).isFalse();
        assertThat(r.failures()).anySatisfy(f -> assertThat(f).contains("overlapping holds"));
    }

    @Test
    void aSlowRecoveryFails() {
        History h = new Histories().acquired(0, 1, 0).harness(Event.KILL, 0, 100).round(1, 2, 4000, 4500).build();
        ScenarioResult r = judge("sqlite", "kill", h);
        assertThat(r.failures()).anySatisfy(f -> assertThat(f).contains("acquired again only after 3900 ms (limit 3666 ms)"));
    }

    @Test
    void noAcquireAfterTheFaultFails() {
        History h = new Histories().round(1, 1, 0, 50).acquired(0, 2, 60).harness(Event.KILL, 0, 100).build();
        ScenarioResult r = judge("sqlite", "kill", h);
        assertThat(r.failures()).anySatisfy(f -> assertThat(f).contains("never acquired again"))
                .anySatisfy(f -> assertThat(f).contains("nobody acquired the lock after the fault"));
    }

    @Test
    void anOverlapAfterARedisRestartIsNotedNotFailed() {
        History h = new Histories().acquired(0, 1, 0).harness(Event.STORE_DOWN, 0, 100).harness(Event.STORE_UP, -1, 150)
                .round(1, 1_000_000, 300, 1200).lost(0, 1, 700).release(0, 1, 1300, "ALREADY_EXPIRED")
                .round(2, 1_000_001, 1300, 2000).build();
        ScenarioResult r = judge("redis", "restart", h);
        assertThat(r.overlaps().count()).isEqualTo(1);
        assertThat(r.passed()).as(r.failures().toString()).isTrue();
        assertThat(r.notes()).anySatisfy(n -> assertThat(n).startsWith("Redis without persistence: the restart forgot the holder: 1 overlapping"));
    }

    @Test
    void theSameOverlapAfterAPostgresRestartFails() {
        History h = new Histories().acquired(0, 1, 0).harness(Event.STORE_DOWN, 0, 100).harness(Event.STORE_UP, -1, 150)
                .round(1, 2, 300, 1200).lost(0, 1, 700).release(0, 1, 1300, "ALREADY_EXPIRED").round(2, 3, 1300, 2000).build();
        assertThat(judge("postgresql", "restart", h).passed()).isFalse();
    }

    @Test
    void fenceRegressionsFailSafeStoresButAreOnlyNotedForRedlock() {
        History h = new Histories().round(0, 5, 0, 100)
                .acquired(1, 4, 200).write(1, 4, Event.REJECTED, 201).release(1, 4, 300, "RELEASED")
                .round(2, 6, 400, 500).build();
        assertThat(judge("postgresql", "none", h).failures()).anySatisfy(f -> assertThat(f).contains("fences went backwards 1 times"));
        ScenarioResult redlock = judge("redlock", "none", h);
        assertThat(redlock.passed()).as(redlock.failures().toString()).isTrue();
        assertThat(redlock.notes()).anySatisfy(n -> assertThat(n).contains("fences not safe").contains("1 fence regressions"));
    }

    @Test
    void outOfOrderWritesFailEveryStore() {
        History h = new Histories().round(0, 5, 0, 100).round(1, 6, 200, 300).logRow(0, 5, 350).build();
        assertThat(judge("redlock", "none", h).failures()).anySatisfy(f -> assertThat(f).contains("1 fenced writes accepted out of order"));
    }

    @Test
    void aPausedHolderOverlapIsInherentButAnyOtherFails() {
        Histories base = PausedHolderCheckerTest.paused().write(0, 1, Event.REJECTED, 3610).lost(0, 1, 3615)
                .release(0, 1, 3620, "ALREADY_EXPIRED").release(1, 2, 4500, "RELEASED").round(2, 3, 4600, 5000);
        ScenarioResult ok = judge("mariadb", "pause", base.build());
        assertThat(ok.passed()).as(ok.failures().toString()).isTrue();
        assertThat(ok.overlaps().count()).isEqualTo(1);
        assertThat(ok.notes()).anySatisfy(n -> assertThat(n).contains("paused holder believed it held the lock for 1515 ms"));

        ScenarioResult bad = judge("mariadb", "pause", base.round(3, 4, 4800, 5200).build());
        assertThat(bad.passed()).isFalse();
    }

    @Test
    void aSilentLossFails() {
        History h = new Histories().acquired(0, 1, 0).release(0, 1, 2500, "RELEASED").round(1, 2, 2100, 3000).build();
        assertThat(judge("redis", "none", h).failures()).anySatisfy(f -> assertThat(f).startsWith("lease lost silently"));
    }

    @Test
    void aCrashedWorkerFails() {
        History h = killRun().error(2, "worker failed: java.lang.NoClassDefFoundError", 4800).build();
        assertThat(judge("postgresql", "kill", h).failures()).contains("1 workers crashed (see their logs)");
    }

    @Test
    void anOverlapUnderAClockJumpFailsAServerStoreButIsNotedForSqlite() {
        History h = new Histories().harness(Event.CLOCK_JUMP, 0, 0).acquired(0, 1, 10).lost(0, 1, 1000)
                .release(0, 1, 1001, "ALREADY_EXPIRED").round(1, 2, 600, 1500).round(2, 3, 1600, 2000).build();
        assertThat(judge("postgresql", "clock", h).passed()).isFalse();
        ScenarioResult sqlite = judge("sqlite", "clock", h);
        assertThat(sqlite.passed()).as(sqlite.failures().toString()).isTrue();
        assertThat(sqlite.notes()).anySatisfy(n -> assertThat(n).startsWith("SQLite has no clock of its own"));
    }

    /**
     * Under a clock jump, SQLite lets two clients hold at once (the clients judge expiry): fence 5 commits
     * first but its acquire returns after fence 6's. On a store with its own clock that is a failure.
     */
    @Test
    void acquiresReturningOutOfCommitOrderUnderAClockJumpAreNotedForSqliteOnly() {
        History h = new Histories().harness(Event.CLOCK_JUMP, 0, 0).round(1, 6, 100, 150).acquired(0, 5, 102)
                .write(0, 5, Event.REJECTED, 103).release(0, 5, 160, "NOT_OWNER").round(2, 7, 400, 500).build();
        ScenarioResult sqlite = judge("sqlite", "clock", h);
        assertThat(sqlite.failures()).noneSatisfy(f -> assertThat(f).contains("fences went backwards"));
        assertThat(sqlite.notes()).anySatisfy(n -> assertThat(n).contains("returned in another order than they committed, "
                + "1 times (e.g. worker 0 got fence 5 after fence 6 had been issued)"));
        assertThat(judge("postgresql", "clock", h).failures()).anySatisfy(f -> assertThat(f).contains("fences went backwards"));
        assertThat(judge("sqlite", "kill", h).failures()).anySatisfy(f -> assertThat(f).contains("fences went backwards"));

        // A repeated fence is no return-order effect, and a lower one without an overlap has nothing to explain it.
        History repeated = new Histories().harness(Event.CLOCK_JUMP, 0, 0).round(1, 6, 100, 150).acquired(0, 6, 102)
                .write(0, 6, Event.REJECTED, 103).release(0, 6, 160, "NOT_OWNER").round(2, 7, 400, 500).build();
        assertThat(judge("sqlite", "clock", repeated).failures()).anySatisfy(f -> assertThat(f).contains("fences went backwards"));
        History apart = new Histories().harness(Event.CLOCK_JUMP, 0, 0).round(1, 6, 100, 150).round(0, 5, 200, 250)
                .round(2, 7, 400, 500).build();
        assertThat(judge("sqlite", "clock", apart).failures()).anySatisfy(f -> assertThat(f).contains("fences went backwards"));
        // The regressing worker overlapped someone earlier in the run, but not with the fence that went back.
        History earlier = new Histories().harness(Event.CLOCK_JUMP, 0, 0).round(1, 2, 10, 60).acquired(0, 3, 20)
                .write(0, 3, Event.REJECTED, 21).release(0, 3, 70, "NOT_OWNER").round(1, 6, 100, 150).round(0, 5, 200, 250)
                .round(2, 7, 400, 500).build();
        assertThat(judge("sqlite", "clock", earlier).failures()).anySatisfy(f -> assertThat(f).contains("fences went backwards"));
        // Fence 5 returned twice (a store that repeated it), once overlapping fence 7: the repeat is never excused.
        History duplicate = new Histories().harness(Event.CLOCK_JUMP, 0, 0).acquired(1, 5, 1).acquired(2, 7, 2)
                .release(1, 5, 10, "RELEASED").acquired(1, 5, 12).release(1, 5, 13, "RELEASED").release(2, 7, 15, "RELEASED")
                .round(2, 8, 400, 500).build();
        assertThat(judge("sqlite", "clock", duplicate).failures()).anySatisfy(f -> assertThat(f).contains("fences went backwards"));
    }

    /** Worker 0 holds fence 1 when the replica starts to lag; the failover loses its lease; worker 1 takes over. */
    static Histories failoverRun(long nextFence) {
        return new Histories().acquired(0, 1, 0).harness(Event.REPLICA_LAG, 0, 100).harness(Event.STORE_DOWN, -1, 3600)
                .harness(Event.STORE_UP, -1, 5000).round(1, nextFence, 5100, 6000).lost(0, 1, 5500)
                .release(0, 1, 5600, "ALREADY_EXPIRED").round(2, nextFence + 1, 6100, 6500);
    }

    @Test
    void anOverlapAfterAFailoverIsNotedButARepeatedFenceFails() {
        ScenarioResult ok = judge("redis-sentinel-noack", "failover", failoverRun(2).build());
        assertThat(ok.overlaps().count()).isEqualTo(1);
        assertThat(ok.passed()).as(ok.failures().toString()).isTrue();
        assertThat(ok.notes()).anySatisfy(n -> assertThat(n).startsWith("Redis failover (asynchronous replication)"));

        ScenarioResult repeated = judge("redis-sentinel", "failover", failoverRun(1).build());
        assertThat(repeated.failures()).anySatisfy(f -> assertThat(f).contains("fences went backwards"));
    }

    @Test
    void theFailoverFaultAppliesOnlyToSentinelStoresWhichRunOnlyWhenNamed() {
        assertThat(Fault.named("failover").appliesTo(StoreSpec.named("redis-sentinel"))).isTrue();
        assertThat(Fault.named("failover").appliesTo(StoreSpec.named("redis"))).isFalse();
        assertThat(StoreSpec.ALL).doesNotContain("redis-sentinel");
        assertThat(StoreSpec.named("redis-sentinel").safeFences()).isTrue();
        assertThat(Fault.named("partition").appliesTo(StoreSpec.named("redis-sentinel"))).as("no proxy before Sentinel").isFalse();
    }

    @Test
    void theZooKeeperFaultsApplyOnlyToZooKeeperAndTheEnsembleRunsOnlyWhenNamed() {
        assertThat(Fault.named("session-expiry").appliesTo(StoreSpec.named("zookeeper"))).isTrue();
        assertThat(Fault.named("session-expiry").appliesTo(StoreSpec.named("zookeeper-ensemble"))).isTrue();
        assertThat(Fault.named("session-expiry").appliesTo(StoreSpec.named("redis"))).isFalse();
        assertThat(Fault.named("leader-loss").appliesTo(StoreSpec.named("zookeeper-ensemble"))).isTrue();
        assertThat(Fault.named("leader-loss").appliesTo(StoreSpec.named("zookeeper"))).isFalse();
        assertThat(Fault.named("restart").appliesTo(StoreSpec.named("zookeeper"))).isTrue();
        assertThat(Fault.named("store-pause").appliesTo(StoreSpec.named("zookeeper-ensemble"))).isFalse();
        assertThat(StoreSpec.ALL).contains("zookeeper").doesNotContain("zookeeper-ensemble");
        assertThat(StoreSpec.EXTRA).contains("zookeeper-ensemble");
    }

    /** The ensemble loses its leader while worker 0 holds fence 10; worker 0 is told, worker 1 takes over. */
    static Histories leaderLossRun() {
        return new Histories().acquired(0, 10, 0).harness(Event.STORE_DOWN, 0, 100).harness(Event.STORE_UP, -1, 700)
                .lost(0, 10, 900).round(1, 20, 1000, 1800).round(2, 21, 1900, 2500);
    }

    @Test
    void aLeaderLossWithTheHolderToldInTimePasses() {
        ScenarioResult r = judge("zookeeper-ensemble", "leader-loss", leaderLossRun().build());
        assertThat(r.passed()).as(r.failures().toString()).isTrue();
        assertThat(r.overlaps().count()).isZero();
        assertThat(r.notes()).anySatisfy(n -> assertThat(n).startsWith("first acquire 300 ms after the store came back"));
    }

    @Test
    void anOverlapUnderLeaderLossOrAZooKeeperRestartFails() {
        // the old holder is told only after the next holder acquired: an ensemble agrees by quorum, so that fails
        History late = new Histories().acquired(0, 10, 0).harness(Event.STORE_DOWN, 0, 100).harness(Event.STORE_UP, -1, 700)
                .round(1, 20, 1000, 1800).lost(0, 10, 1200).round(2, 21, 1900, 2500).build();
        assertThat(judge("zookeeper-ensemble", "leader-loss", late).failures())
                .anySatisfy(f -> assertThat(f).contains("overlapping holds"));
        assertThat(judge("zookeeper", "restart", late).failures()).as("ZooKeeper is durable: a restart forgets nothing")
                .anySatisfy(f -> assertThat(f).contains("overlapping holds"));
    }
}
