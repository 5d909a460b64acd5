package dev.turnstile.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Redlock is built as every store is: {@code builder(nodes)}, options, {@code build()}; bad input names the fix (docs/hostile-input.md). */
class RedlockBuilderTest {
    private RedisClient client;
    private final List<RedisLockStore> made = new ArrayList<>();

    @BeforeEach
    void client() {
        client = RedisClient.create(RedisServers.STANDALONE);
    }

    @AfterEach
    void close() {
        made.forEach(RedisLockStore::close);
        client.shutdown();
    }

    private List<RedisLockStore> nodes(int n) {
        List<RedisLockStore> nodes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            RedisLockStore node = RedisLockStore.builder(client).description("node" + i).build();
            nodes.add(node);
            made.add(node);
        }
        return nodes;
    }

    @Test
    void aNodeListThatCannotMakeAMajorityIsRefusedNamingTheFix() {
        assertThatThrownBy(() -> RedlockLockStore.builder(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nodes is null");
        assertThatThrownBy(() -> RedlockLockStore.builder(nodes(2))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("odd number of at least 3").hasMessageContaining("got 2");
        assertThatThrownBy(() -> RedlockLockStore.builder(nodes(4))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("got 4").hasMessageContaining("add or drop one node");
        List<RedisLockStore> withANull = new ArrayList<>(nodes(2));
        withANull.add(null);
        assertThatThrownBy(() -> RedlockLockStore.builder(withANull)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("holds a null");
    }

    @Test
    void aNodeTimeoutThatIsNotPositiveIsRefused() {
        RedlockLockStore.Builder b = RedlockLockStore.builder(nodes(3));
        for (Duration bad : new Duration[] {null, Duration.ZERO, Duration.ofMillis(-1), Duration.ofNanos(999_999),
                Duration.ofDays(1).plusMillis(1), Duration.ofSeconds(Long.MAX_VALUE), Duration.ofNanos(Long.MAX_VALUE)}) {
            assertThatThrownBy(() -> b.nodeTimeout(bad)).as("%s", bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("1ms to 1d");
        }
        b.nodeTimeout(Duration.ofMillis(1)).nodeTimeout(Duration.ofDays(1)); // the bounds are taken
    }

    @Test
    void anImmutableListOfNodesIsTaken() {
        // List.of's contains(null) throws NullPointerException: the null check must not call it
        List<RedisLockStore> three = nodes(3);
        RedlockLockStore.Builder b = RedlockLockStore.builder(List.of(three.get(0), three.get(1), three.get(2)));
        assertThat(b).isNotNull();
        assertThatThrownBy(() -> RedlockLockStore.of(List.copyOf(nodes(3)), Duration.ofMillis(50)))
                .as("one server three times: refused for that, not for the list's kind")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("same server");
    }

    @Test
    void theBuilderAndTheShortcutBuildTheSameStore() {
        // the three nodes are one server here: the builder refuses that, as of() does
        assertThatThrownBy(() -> RedlockLockStore.builder(nodes(3)).nodeTimeout(Duration.ofMillis(50)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("same server");
        assertThatThrownBy(() -> RedlockLockStore.of(nodes(3), Duration.ofMillis(50)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("same server");
        assertThat(made).allSatisfy(n -> assertThat(n.isClosed()).as("a refused Redlock closes its nodes").isTrue());
    }
}
