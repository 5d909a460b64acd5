package dev.turnstile.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * a store that owns its client (LockStores.open) closed while other threads acquire, wait and
 * watch: afterwards no thread of it (lettuce-*, netty, turnstile-*) and no connection of it (CLIENT LIST) may be left.
 */
class RedisCloseLeakTest {

    @Test
    void closeRacingAcquiresAndWatchesLeavesNoThreadsOrConnections() throws Exception {
        RedisClient probe = RedisClient.create(RedisServers.STANDALONE);
        try (StatefulRedisConnection<String, String> raw = probe.connect()) {
            long clientsBefore = clients(raw);
            long threadsBefore = threads();
            for (int round = 0; round < 10; round++) {
                LockStore store = LockStores.open(RedisServers.STANDALONE);
                Turnstile t = Turnstile.builder(store).build();
                String name = "atk-leak-" + UUID.randomUUID().toString().substring(0, 8);
                CountDownLatch go = new CountDownLatch(1);
                List<Thread> workers = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    Thread w = new Thread(() -> {
                        try {
                            go.await();
                            for (int k = 0; k < 50; k++) {
                                t.acquire(name, LockOptions.lockAtMostFor(Duration.ofSeconds(2)), Duration.ofMillis(50))
                                        .ifPresent(l -> l.release());
                            }
                        } catch (Throwable expected) {
                            // the store closes under it
                        }
                    }, "atk-worker-" + i);
                    w.start();
                    workers.add(w);
                }
                go.countDown();
                Thread.sleep(round * 3L);
                t.close();
                store.close();
                for (Thread w : workers) {
                    w.join(TimeUnit.SECONDS.toMillis(20));
                    assertThat(w.isAlive()).as("a worker still blocked 20 s after close (round %d)", round).isFalse();
                }
            }
            Thread.sleep(3_000);
            assertThat(clients(raw)).as("connections to the server after 10 closed stores").isEqualTo(clientsBefore);
            assertThat(threads()).as("lettuce/netty/turnstile threads after 10 closed stores: %s", names()).isLessThanOrEqualTo(threadsBefore);
        } finally {
            probe.shutdown();
        }
    }

    private static long clients(StatefulRedisConnection<String, String> raw) {
        return raw.sync().clientList().lines().filter(l -> !l.isBlank()).count();
    }

    private static boolean ours(Thread t) {
        String n = t.getName().toLowerCase();
        return n.startsWith("turnstile") || n.contains("lettuce") || n.contains("netty");
    }

    private static long threads() {
        return Thread.getAllStackTraces().keySet().stream().filter(RedisCloseLeakTest::ours).count();
    }

    private static List<String> names() {
        return Thread.getAllStackTraces().keySet().stream().filter(RedisCloseLeakTest::ours).map(Thread::getName).sorted().toList();
    }
}
