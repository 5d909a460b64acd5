package dev.turnstile.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.FenceGate;
import dev.turnstile.StaleFenceException;
import dev.turnstile.StoreUnavailableException;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Fenced writes on a real Redis and a real 3-master cluster (issue 26). */
@Timeout(120)
class RedisFencesTest {
    private static RedisClient client;
    private static StatefulRedisConnection<String, String> connection;
    private static RedisCommands<String, String> redis;

    @BeforeAll
    static void connect() {
        client = RedisClient.create(RedisServers.STANDALONE);
        connection = client.connect();
        redis = connection.sync();
    }

    @AfterAll
    static void close() {
        connection.close();
        client.shutdown();
    }

    private static String key() {
        return "tsf:" + UUID.randomUUID();
    }

    @Test
    void aWriteAppliesOnlyWithAFenceAtLeastTheRecordedOneAndRecordsIt() {
        RedisFences f = RedisFences.over(redis);
        String k = key();
        f.set(k, "five", 5);
        f.set(k, "five again", 5);
        f.set(k, "nine", 9);
        assertThatThrownBy(() -> f.set(k, "seven", 7))
                .isInstanceOfSatisfying(StaleFenceException.class, e -> {
                    assertThat(e.resource()).isEqualTo(k);
                    assertThat(e.fence()).isEqualTo(7);
                    assertThat(e.highestSeen()).isEqualTo(9);
                });
        assertThat(redis.get(k)).isEqualTo("nine");
        assertThat(redis.get(RedisFences.fenceKey(k))).isEqualTo("9");
        assertThat(redis.ttl(RedisFences.fenceKey(k))).as("a fence never expires").isEqualTo(-1);

        String h = key();
        f.hset(h, "a", "1", 3);
        f.hset(h, "b", "", 4);
        assertThatThrownBy(() -> f.hset(h, "a", "old", 3)).isInstanceOf(StaleFenceException.class);
        assertThat(redis.hgetall(h)).containsEntry("a", "1").containsEntry("b", "").hasSize(2);
    }

    @Test
    void fencesCompareAsNumbersOfAnySize() {
        RedisFences f = RedisFences.over(redis);
        String k = key();
        // 2^53 + 1 is not a double; the script compares the digits, not Lua numbers
        f.set(k, "a", 9_007_199_254_740_993L);
        assertThatThrownBy(() -> f.set(k, "b", 9_007_199_254_740_992L)).isInstanceOf(StaleFenceException.class);
        f.set(k, "c", Long.MAX_VALUE);
        assertThatThrownBy(() -> f.set(k, "d", 99)).isInstanceOf(StaleFenceException.class);
        assertThat(redis.get(k)).isEqualTo("c");
    }

    @Test
    void writesThatArriveOutOfFenceOrderNeverOverwriteANewerOne() throws Exception {
        RedisFences f = RedisFences.over(redis);
        String k = key();
        AtomicLong fences = new AtomicLong();
        Set<Long> admitted = ConcurrentHashMap.newKeySet();
        List<StaleFenceException> refused = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> writers = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            writers.add(CompletableFuture.runAsync(() -> {
                for (int i = 0; i < 100; i++) {
                    long fence = fences.incrementAndGet();
                    try {
                        Thread.sleep(ThreadLocalRandom.current().nextInt(3));
                        f.set(k, Long.toString(fence), fence);
                        admitted.add(fence);
                    } catch (StaleFenceException e) {
                        refused.add(e);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }
            }));
        }
        CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new)).get(100, TimeUnit.SECONDS);
        assertThat(admitted.size() + refused.size()).isEqualTo(400);
        long highest = admitted.stream().mapToLong(Long::longValue).max().orElseThrow();
        assertThat(redis.get(k)).isEqualTo(Long.toString(highest));
        assertThat(refused).allSatisfy(e -> assertThat(e.highestSeen()).isGreaterThan(e.fence()));
    }

    @Test
    void aFlushedScriptCacheIsRefilled() {
        RedisFences f = RedisFences.over(redis);
        String k = key();
        f.set(k, "a", 1);
        redis.scriptFlush();
        f.set(k, "b", 2);
        assertThat(redis.get(k)).isEqualTo("b");
    }

    @Test
    void theGateRecordsAndComparesBeforeTheWorkRuns() throws Exception {
        FenceGate gate = RedisFences.over(redis).gate();
        String resource = "gate-" + UUID.randomUUID();
        assertThat(gate.admit(resource, 4, () -> "ran")).isEqualTo("ran");
        AtomicBoolean ran = new AtomicBoolean();
        assertThatThrownBy(() -> gate.admit(resource, 3, () -> ran.getAndSet(true))).isInstanceOf(StaleFenceException.class);
        assertThat(ran).isFalse();
        assertThat(redis.exists(resource)).as("the gate writes only the fence key").isZero();
        assertThat(redis.get(RedisFences.fenceKey(resource))).isEqualTo("4");
    }

    @Test
    void theFenceKeyIsInTheKeysHashSlot() {
        for (String k : List.of("plain", "user:{42}:cart", "{tag}rest", "a{b", "{", "ü-日本", "x{y}z{w}")) {
            assertThat(SlotHash.getSlot(RedisFences.fenceKey(k))).as(k).isEqualTo(SlotHash.getSlot(k));
        }
        assertThat(RedisFences.fenceKey("user:{42}:cart")).isEqualTo("turnstile-fence:user:{42}:cart");
        assertThat(RedisFences.fenceKey("plain")).isEqualTo("{plain}:turnstile-fence");
    }

    /** Attack finding: fenceKey("x") was fenceKey("{x}"), and a fence key could be written as data. */
    @Test
    void fenceKeysNeverMeetEachOtherOrData() {
        assertThat(RedisFences.fenceKey("x")).isNotEqualTo(RedisFences.fenceKey("{x}"));
        RedisFences f = RedisFences.over(redis);
        String k = key();
        f.set(k, "v", 100);
        for (String shaped : List.of(RedisFences.fenceKey(k), "{" + k + "}:turnstile-fence", "turnstile-fence:{a}b")) {
            assertThatThrownBy(() -> f.set(shaped, "1", 1)).as(shaped).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("has the shape of a fence key");
        }
        assertThatThrownBy(() -> f.set(k, "stale", 5)).isInstanceOf(StaleFenceException.class);
        assertThat(redis.get(RedisFences.fenceKey(k))).isEqualTo("100");
    }

    @Test
    void whatAFencedWriteCannotJudgeOrWriteWritesNothingAndSaysWhy() {
        RedisFences f = RedisFences.over(redis);
        for (String odd : List.of("-99", "007", "9 ", "x")) {
            String k = key();
            redis.set(RedisFences.fenceKey(k), odd);
            assertThatThrownBy(() -> f.set(k, "v", 5)).as(odd).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("holds '" + odd + "', not a fence");
            assertThat(redis.exists(k)).as(odd).isZero();
        }
        String hashFence = key();
        redis.hset(RedisFences.fenceKey(hashFence), "a", "1");
        assertThatThrownBy(() -> f.set(hashFence, "v", 5)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Redis refused the fenced write").hasMessageContaining("nothing was written");
        assertThat(redis.exists(hashFence)).isZero();
        String stringKey = key();
        redis.set(stringKey, "plain");
        assertThatThrownBy(() -> f.hset(stringKey, "a", "1", 5)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("holds a string, not a hash");
        assertThat(redis.exists(RedisFences.fenceKey(stringKey))).as("no fence recorded either").isZero();
    }

    @Test
    void onACluster() throws Exception {
        try (RedisServers servers = new RedisServers()) {
            List<RedisServers.Node> nodes = servers.cluster(3);
            RedisClusterClient cluster = RedisClusterClient.create(RedisURI.create("127.0.0.1", nodes.get(0).port));
            try (StatefulRedisClusterConnection<String, String> c = cluster.connect()) {
                RedisAdvancedClusterCommands<String, String> commands = c.sync();
                RedisFences f = RedisFences.over(commands);
                for (int i = 0; i < 20; i++) {
                    String k = "cluster-key-" + i;
                    f.set(k, "v", 2);
                    assertThatThrownBy(() -> f.set(k, "old", 1)).isInstanceOf(StaleFenceException.class);
                    f.hset("{h}" + i, "f", "v", 3);
                    assertThat(commands.get(k)).isEqualTo("v");
                }
            } finally {
                cluster.shutdown();
            }
        }
    }

    @Test
    void aFenceKeyHoldingSomethingElseIsNamed() {
        String k = key();
        redis.set(RedisFences.fenceKey(k), "not-a-number-but-long");
        assertThatThrownBy(() -> RedisFences.over(redis).set(k, "v", 5))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("holds 'not-a-number-but-long', not a fence")
                .hasMessageContaining("nothing was written");
    }

    @Test
    void aServerThatStopsAnsweringIsAStoreFailure() throws Exception {
        try (RedisServers servers = new RedisServers()) {
            RedisServers.Node node = servers.server();
            RedisClient c = RedisClient.create(RedisURI.builder().withHost("127.0.0.1").withPort(node.port)
                    .withTimeout(Duration.ofMillis(500)).build());
            try (StatefulRedisConnection<String, String> conn = c.connect()) {
                RedisFences f = RedisFences.over(conn.sync());
                f.set("k", "v", 1);
                RedisServers.signal(node, "STOP");
                try {
                    assertThatThrownBy(() -> f.set("k", "w", 2)).isInstanceOf(StoreUnavailableException.class)
                            .hasMessageContaining("may or may not have been applied");
                } finally {
                    RedisServers.signal(node, "CONT");
                }
            } finally {
                c.shutdown();
            }
        }
    }

    @Test
    void badInputIsRefusedWithWhatToFix() {
        RedisFences f = RedisFences.over(redis);
        assertThatThrownBy(() -> RedisFences.over(null)).hasMessageContaining("connection.sync()");
        assertThatThrownBy(() -> f.set("", "v", 1)).hasMessageContaining("key is empty");
        assertThatThrownBy(() -> f.set("k", null, 1)).hasMessageContaining("value is null");
        assertThatThrownBy(() -> f.hset("k", null, "v", 1)).hasMessageContaining("field is null");
        assertThatThrownBy(() -> f.set("k", "v", 0)).hasMessageContaining("fence 0 is not positive");
        assertThatThrownBy(() -> f.gate().admit(" x", 1, () -> 1)).hasMessageContaining("fenced resource");
        // hostile keys and values are data, not script
        String k = key() + "\n') redis.call('FLUSHALL') --";
        f.set(k, "']] end redis.call('SET','pwned','1') --", 1);
        assertThat(redis.get(k)).isEqualTo("']] end redis.call('SET','pwned','1') --");
        assertThat(redis.exists("pwned")).isZero();
    }
}
