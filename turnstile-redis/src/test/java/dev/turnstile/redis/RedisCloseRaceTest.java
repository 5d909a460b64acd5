package dev.turnstile.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.spi.AcquireRequest;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * close() racing the first command on another thread. The command connection is opened under
 * the monitor of the store's ScriptRunner, which close() also takes (to close that connection)
 * after it has marked the store closed. Had the opening not checked 'closed' again under that
 * monitor, a close() that ran between the first check and the opening would be followed by the
 * other thread opening the command connection of a closed store, which nobody closes (the client
 * is the caller's), and by a lock granted by a closed store.
 */
class RedisCloseRaceTest {

    @Test
    void aCloseBetweenTheOpenCheckAndTheConnectLeavesNoConnectionAndGrantsNothing() throws Exception {
        String name = "atk-" + UUID.randomUUID().toString().substring(0, 8);
        RedisClient client = RedisClient.create(RedisServers.STANDALONE);
        try (StatefulRedisConnection<String, String> raw = client.connect()) {
            RedisLockStore store = RedisLockStore.builder(client).build();
            long before = clients(raw);
            CompletableFuture<Object> acquire;
            Thread[] worker = new Thread[1];
            synchronized (store.scripts()) {           // the monitor the opening and close() share
                acquire = CompletableFuture.supplyAsync(() -> {
                    worker[0] = Thread.currentThread();
                    try {
                        return store.tryAcquire(new AcquireRequest(name, "me", "t", Duration.ofSeconds(30)));
                    } catch (RuntimeException e) {
                        return e;
                    }
                });
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while ((worker[0] == null || worker[0].getState() != Thread.State.BLOCKED) && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                assertThat(worker[0].getState()).as("the acquire passed checkOpen() and waits for the monitor")
                        .isEqualTo(Thread.State.BLOCKED);
                store.close();                         // reentrant: runs now, before the connect
            }
            Object outcome = acquire.get(10, TimeUnit.SECONDS);
            Thread.sleep(200);
            long after = clients(raw);
            String held = raw.sync().get(store.lockKey(name));
            raw.sync().del(store.lockKey(name), store.lockKey(name) + ":fence");
            assertThat(outcome).as("an acquire on a store closed before it connected").isInstanceOf(IllegalStateException.class);
            assertThat(held).as("the lock granted by a closed store").isNull();
            assertThat(after).as("connections to the server after close (CLIENT LIST), before: " + before).isEqualTo(before);
        } finally {
            client.shutdown();
        }
    }

    private static long clients(StatefulRedisConnection<String, String> raw) {
        return raw.sync().clientList().lines().filter(l -> !l.isBlank()).count();
    }
}
