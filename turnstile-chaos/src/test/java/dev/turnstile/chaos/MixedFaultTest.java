package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class MixedFaultTest {

    private static Fault.Mixed mixed(String store) {
        return new Fault.Mixed(42, Duration.ofSeconds(60), StoreSpec.named(store));
    }

    @Test
    void singleNodeStoresDrawOnlyTheFaultsUnderWhichTheyPromiseExclusion() {
        assertThat(mixed("redis").choices()).containsExactly("kill", "pause", "partition", "latency", "clock")
                .doesNotContain("restart"); // our Redis runs without persistence
        assertThat(mixed("postgresql").choices()).containsExactly("kill", "pause", "partition", "latency", "restart", "clock");
        assertThat(mixed("sqlite").choices()).containsExactly("kill", "pause"); // no clock of its own, not networked
        assertThat(mixed("redis-sentinel").choices()).doesNotContain("failover");
    }

    @Test
    void zooKeeperDrawsItsSessionAndLeaderFaultsAndEveryOtherThatApplies() {
        // durable (the log is synced before an answer) and one store to its clients: no fault is left out
        assertThat(mixed("zookeeper").choices()).containsExactly("kill", "pause", "partition", "latency", "restart", "clock",
                "store-pause", "session-expiry");
        // the ensemble's store-level fault is its leader's loss; no single server to restart or freeze
        assertThat(mixed("zookeeper-ensemble").choices()).containsExactly("kill", "pause", "partition", "latency", "clock",
                "session-expiry", "leader-loss");
    }

    @Test
    void redlockDrawsEveryFaultItHas() {
        assertThat(mixed("redlock").choices()).containsExactly("kill", "pause", "partition", "latency", "redlock-minority",
                "redlock-majority", "clock");
    }

    @Test
    void theSeedAndTheStoreNameTheSchedule() {
        assertThat(mixed("redis").describe(ChaosConfig.longRun(java.nio.file.Path.of("unused")))).contains("seed 42");
        assertThat(mixed("redis").needsProxy()).isTrue();
        assertThat(mixed("sqlite").needsProxy()).isFalse();
        assertThat(mixed("sqlite").needsFaketime()).isFalse();
        assertThat(mixed("redis").needsFaketime()).isTrue();
    }
}
