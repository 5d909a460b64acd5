package dev.turnstile.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Which servers a Redlock URL names: one server under two addresses, and the database number. */
class RedlockNodesTest {
    static RedisServers servers;
    static RedisServers.Node a;
    static RedisServers.Node b;
    static RedisServers.Node c;

    @BeforeAll
    static void start() {
        servers = new RedisServers();
        a = servers.server("--bind", "127.0.0.1", "127.0.0.2"); // one server, two addresses
        b = servers.server();
        c = servers.server();
    }

    @AfterAll
    static void stop() {
        servers.close();
    }

    static long lettuceThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("lettuce-")).count();
    }

    static int clients(RedisServers.Node n) throws Exception {
        String info = RedisServers.exec(List.of("redis-cli", "-p", Integer.toString(n.port), "INFO", "clients"));
        return Integer.parseInt(info.replaceAll("(?s).*connected_clients:(\\d+).*", "$1"));
    }

    @Test
    void oneServerUnderTwoAddressesIsRefusedAndNothingIsLeftOpen() throws Exception {
        int clientsBefore = clients(a);
        long threadsBefore = lettuceThreads();
        String url = "redlock://127.0.0.1:" + a.port + ",127.0.0.2:" + a.port + "," + b.hostPort();
        assertThatThrownBy(() -> LockStores.open(url)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("same server").hasMessageContaining("127.0.0.2:" + a.port)
                .hasMessageContaining("run_id");
        Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(clients(a)).as("connections to the server").isEqualTo(clientsBefore);
            assertThat(lettuceThreads()).as("Lettuce threads").isLessThanOrEqualTo(threadsBefore);
        });
    }

    @Test
    void theDatabaseNumberIsUsedOnEveryNode() throws Exception {
        String name = "rl-db-" + UUID.randomUUID().toString().substring(0, 8);
        try (LockStore store = LockStores.open("redlock://" + a.hostPort() + "," + b.hostPort() + "," + c.hostPort() + "/5")) {
            store.tryAcquire(new AcquireRequest(name, "o", "t", Duration.ofSeconds(30))).orElseThrow();
            for (RedisServers.Node n : List.of(a, b, c)) {
                String key = "turnstile:{" + name + "}";
                assertThat(RedisServers.exec(List.of("redis-cli", "-p", Integer.toString(n.port), "-n", "5", "EXISTS", key)).trim())
                        .isEqualTo("1");
                assertThat(RedisServers.exec(List.of("redis-cli", "-p", Integer.toString(n.port), "-n", "0", "EXISTS", key)).trim())
                        .isEqualTo("0");
            }
        }
    }
}
