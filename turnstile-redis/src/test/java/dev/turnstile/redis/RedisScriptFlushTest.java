package dev.turnstile.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** SCRIPT FLUSH while the store is in use (NOSCRIPT recovery), standalone and Cluster. */
class RedisScriptFlushTest {

    @Test
    void standaloneKeepsWorkingThroughScriptFlushes() throws Exception {
        RedisClient client = RedisClient.create(RedisServers.STANDALONE);
        try (StatefulRedisConnection<String, String> raw = client.connect();
                LockStore store = LockStores.open(RedisServers.STANDALONE)) {
            exercise(store, () -> raw.sync().scriptFlush());
        } finally {
            client.shutdown();
        }
    }

    @Test
    void clusterKeepsWorkingThroughScriptFlushes() throws Exception {
        try (RedisServers servers = new RedisServers()) {
            List<RedisServers.Node> masters = servers.cluster(3);
            String url = "redis-cluster://" + masters.stream().map(RedisServers.Node::hostPort).collect(Collectors.joining(","));
            RedisClusterClient client = RedisClusterClient.create("redis://" + masters.get(0).hostPort());
            try (StatefulRedisClusterConnection<String, String> raw = client.connect();
                    LockStore store = LockStores.open(url)) {
                exercise(store, () -> raw.sync().scriptFlush()); // every master (Lettuce fans SCRIPT FLUSH out)
            } finally {
                client.shutdown();
            }
        }
    }

    private static void exercise(LockStore store, Runnable flush) throws Exception {
        List<Throwable> failures = new ArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread flusher = new Thread(() -> {
            while (!stop.get()) {
                try {
                    flush.run();
                    Thread.sleep(2);
                } catch (Exception e) {
                    return;
                }
            }
        });
        flusher.start();
        long fence = 0;
        try {
            for (int i = 0; i < 300; i++) {
                String name = "atk-flush-" + (i % 7);
                String token = UUID.randomUUID().toString();
                try {
                    Optional<Grant> g = store.tryAcquire(new AcquireRequest(name, "me", token, Duration.ofSeconds(5)));
                    assertThat(g).as("round " + i).isPresent();
                    assertThat(store.extend(name, token, Duration.ofSeconds(5))).isTrue();
                    assertThat(store.release(name, token, Duration.ZERO)).isTrue();
                    fence = g.get().fence();
                } catch (Throwable t) {
                    failures.add(t);
                }
            }
        } finally {
            stop.set(true);
            flusher.join();
        }
        assertThat(failures).as("operations that failed while scripts were flushed").isEmpty();
        assertThat(fence).isPositive();
    }
}
