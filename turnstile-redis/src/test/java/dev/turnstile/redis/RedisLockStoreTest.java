package dev.turnstile.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.HandOver;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What is particular to the Redis store, beyond the shared contract. */
class RedisLockStoreTest {
    RedisClient client;
    StatefulRedisConnection<String, String> raw;

    @BeforeEach
    void connect() {
        client = RedisClient.create(RedisServers.STANDALONE);
        raw = client.connect();
    }

    @AfterEach
    void disconnect() {
        raw.close();
        client.shutdown();
    }

    static String name() {
        return "r-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void closingAfterItsClientWasShutDownLogsNothing() throws Exception {
        // Spring Data Redis shuts its client down before the store bean is closed: Lettuce used
        // to log "Connection is already closed" at WARN on every application shutdown.
        RedisClient own = RedisClient.create(RedisServers.STANDALONE);
        RedisLockStore store = RedisLockStore.builder(own).build();
        assertThat(store.tryAcquire(new AcquireRequest(name(), "me", "t", Duration.ofSeconds(5)))).isPresent();
        store.watchReleases(name(), released -> { });                 // the notification connection too
        own.shutdown();
        java.io.PrintStream err = System.err;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true));
        try {
            store.close();
            store.close();                                           // and twice is the same
        } finally {
            System.setErr(err);
        }
        assertThat(captured.toString()).doesNotContain("already closed").doesNotContain("WARN");
        assertThat(store.isClosed()).isTrue();
    }

    @Test
    void redisCliShowsHolderTimesAndFenceInPlainFields() {
        try (RedisLockStore store = RedisLockStore.builder(client).build()) {
            String name = name();
            long before = serverMillis();
            Lease lease = Turnstile.builder(store).owner("host-a:42:xyz").build()
                    .tryAcquire(name, LockOptions.lockAtMostFor(Duration.ofSeconds(30))).orElseThrow();
            long after = serverMillis();
            String value = raw.sync().get("turnstile:{" + name + "}");
            // The times are the server's TIME (lockAtLeastFor is counted from acquired_at), not the client's.
            long acquiredAt = Long.parseLong(value.replaceAll(".* acquired_at=(\\d+) .*", "$1"));
            assertThat(acquiredAt).isBetween(before, after);
            assertThat(value).isEqualTo("token=" + lease.token() + " fence=" + lease.fence() + " acquired_at="
                    + acquiredAt + " expires_at=" + (acquiredAt + 30_000) + " owner=host-a:42:xyz");
            assertThat(raw.sync().pttl("turnstile:{" + name + "}")).isBetween(25_000L, 30_000L);
            long extendedFrom = serverMillis();
            lease.extend(Duration.ofSeconds(60));
            long extendedBy = serverMillis();
            String extended = raw.sync().get("turnstile:{" + name + "}");
            long expiresAt = Long.parseLong(extended.replaceAll(".* expires_at=(\\d+) .*", "$1"));
            assertThat(expiresAt).isBetween(extendedFrom + 60_000, extendedBy + 60_000);
            assertThat(extended).as("an extend keeps acquired_at").isEqualTo("token=" + lease.token() + " fence=" + lease.fence()
                    + " acquired_at=" + acquiredAt + " expires_at=" + expiresAt + " owner=host-a:42:xyz");
            assertThat(raw.sync().pttl("turnstile:{" + name + "}")).isGreaterThan(55_000L);
            assertThat(store.lockKey(name)).isEqualTo("turnstile:{" + name + "}");
        }
    }

    /** The server's clock in epoch ms, from TIME. */
    private long serverMillis() {
        List<String> t = raw.sync().time();
        return Long.parseLong(t.get(0)) * 1000 + Long.parseLong(t.get(1)) / 1000;
    }

    @Test
    void scriptsAreRecoveredAfterScriptFlush() {
        try (RedisLockStore store = RedisLockStore.builder(client).build()) {
            Turnstile t = Turnstile.builder(store).build();
            t.tryAcquire(name()).orElseThrow().release();
            raw.sync().scriptFlush();
            Lease lease = t.tryAcquire(name()).orElseThrow();
            raw.sync().scriptFlush();
            lease.extend(Duration.ofSeconds(10));
            raw.sync().scriptFlush();
            assertThat(lease.release()).hasToString("RELEASED");
        }
    }

    @Test
    void aLostFenceCounterRestartsAboveEveryFenceIssued() {
        try (RedisLockStore store = RedisLockStore.builder(client).build()) {
            Turnstile t = Turnstile.builder(store).build();
            String name = name();
            long first = t.tryAcquire(name).orElseThrow().fence();
            Lease second = t.tryAcquire(name + "x").orElseThrow();
            raw.sync().del("turnstile:{" + name + "}", "turnstile:{" + name + "}:fence"); // a restart without persistence
            long afterLoss = t.tryAcquire(name).orElseThrow().fence();
            assertThat(afterLoss).isGreaterThan(first);
            assertThat(second.fence()).isPositive();
        }
    }

    @Test
    void lockAndFenceKeysShareAHashSlotWhateverTheName() {
        RedisLockStore store = RedisLockStore.builder(client).build();
        for (String n : List.of("plain", "with}brace", "{tagged}", "a{b}c", "}{", "}", "}}x")) {
            String lock = store.lockKey(n);
            assertThat(io.lettuce.core.cluster.SlotHash.getSlot(lock))
                    .as(n).isEqualTo(io.lettuce.core.cluster.SlotHash.getSlot(lock + ":fence"));
        }
    }

    @Test
    void aWaiterInAnotherClientIsWokenByPubSubNotByPolling() throws Exception {
        try (LockStore a = LockStores.open(RedisServers.STANDALONE); LockStore b = LockStores.open(RedisServers.STANDALONE)) {
            String name = name();
            Lease holder = Turnstile.builder(a).build().tryAcquire(name).orElseThrow();
            Turnstile waiter = Turnstile.builder(b).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).build();
            CompletableFuture<Optional<Lease>> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return waiter.acquire(name, LockOptions.defaults(), Duration.ofSeconds(30));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(500);
            long released = System.nanoTime();
            holder.release();
            assertThat(waiting.get(4, TimeUnit.SECONDS)).isPresent();
            assertThat(Duration.ofNanos(System.nanoTime() - released)).as("woken, not polled every 5 s")
                    .isLessThan(Duration.ofSeconds(2));
        }
    }

    private static CompletableFuture<Optional<Lease>> waitFor(Turnstile t, String name) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return t.acquire(name, LockOptions.defaults(), Duration.ofSeconds(30));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void aWaiterQueuesUpWhileBusyAndTheReleaseNamesItAlongWithTheReleasedToken() throws Exception {
        String name = name();
        String queue = "turnstile:{" + name + "}:waiters";
        StatefulRedisPubSubConnection<String, String> listen = client.connectPubSub();
        java.util.concurrent.BlockingQueue<String> messages = new java.util.concurrent.LinkedBlockingQueue<>();
        listen.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String channel, String message) {
                messages.add(message);
            }
        });
        listen.sync().subscribe("turnstile:{" + name + "}:released");
        try (LockStore a = LockStores.open(RedisServers.STANDALONE); LockStore b = LockStores.open(RedisServers.STANDALONE)) {
            Lease holder = Turnstile.builder(a).build().tryAcquire(name).orElseThrow();
            assertThat(Turnstile.builder(b).build().tryAcquire(name)).isEmpty();
            assertThat(raw.sync().exists(queue)).as("a caller that will not wait is not queued").isZero();
            CompletableFuture<Optional<Lease>> waiting = waitFor(Turnstile.builder(b).build(), name);
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> raw.sync().zcard(queue) == 1);
            String waiterId = raw.sync().zrange(queue, 0, 0).get(0);
            assertThat(raw.sync().pttl(queue)).as("a queue left behind expires").isBetween(1L, 60_000L);
            holder.release();
            assertThat(messages.poll(5, TimeUnit.SECONDS)).isEqualTo(holder.token() + " " + waiterId);
            Lease next = waiting.get(5, TimeUnit.SECONDS).orElseThrow();
            assertThat(raw.sync().zcard(queue)).as("named and served: off the queue").isZero();
            next.release();
            assertThat(messages.poll(5, TimeUnit.SECONDS)).as("nobody queued: the token alone").isEqualTo(next.token());
        } finally {
            listen.close();
        }
    }

    @Test
    void aHandOverGivesTheLockToTheNextHolderInOneCallUnlessAnotherClientWaitedLonger() {
        String name = name();
        String key = "turnstile:{" + name + "}";
        try (RedisLockStore mine = RedisLockStore.builder(client).build(); RedisLockStore other = RedisLockStore.builder(client).build()) {
            assertThat(mine.capability(dev.turnstile.spi.HandsOver.class)).containsSame(mine);
            Grant first = mine.tryAcquire(new AcquireRequest(name, "me", "t1", Duration.ofSeconds(30))).orElseThrow();
            raw.sync().del(key + ":fence"); // evicted, say: the hand-over must not restart the fences at 1
            HandOver handed = mine.handOver(name, "t1", new AcquireRequest(name, "me", "t2", Duration.ofSeconds(20), true));
            assertThat(handed.released()).isTrue();
            Grant second = handed.grant().orElseThrow();
            assertThat(second.fence()).isGreaterThan(first.fence());
            assertThat(raw.sync().get(key)).startsWith("token=t2 fence=" + second.fence() + " acquired_at=").endsWith(" owner=me");
            assertThat(raw.sync().pttl(key)).isBetween(15_000L, 20_000L);
            assertThat(mine.handOver(name, "t1", new AcquireRequest(name, "me", "t3", Duration.ofSeconds(20), true)))
                    .as("the old token holds nothing any more").isEqualTo(HandOver.notHeld());

            assertThat(other.tryAcquire(new AcquireRequest(name, "you", "u1", Duration.ofSeconds(30), true))).isEmpty(); // queued
            HandOver fair = mine.handOver(name, "t2", new AcquireRequest(name, "me", "t4", Duration.ofSeconds(20), true));
            assertThat(fair).as("another client was first in the queue: released to it").isEqualTo(HandOver.releasedOnly());
            assertThat(raw.sync().exists(key)).isZero();
            assertThat(raw.sync().zcard(key + ":waiters")).as("it was named, and taken off the queue").isZero();
            assertThat(other.tryAcquire(new AcquireRequest(name, "you", "u2", Duration.ofSeconds(30), true))).isPresent();
            assertThatThrownBy(() -> mine.handOver(name, "u2", new AcquireRequest(name + "x", "me", "t5", Duration.ofSeconds(1), true)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("own name");
            assertThat(raw.sync().get(key)).as("a rejected hand-over changes nothing").startsWith("token=u2 ");
        }
    }

    @Test
    void threadsOfOneClientHandTheLockOnWithoutAnAcquireOfTheirOwn() throws Exception {
        String name = name();
        java.util.concurrent.atomic.AtomicInteger acquires = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger handedOver = new java.util.concurrent.atomic.AtomicInteger();
        try (RedisLockStore redis = RedisLockStore.builder(client).build()) {
            class Counting implements LockStore, dev.turnstile.spi.NotifiesReleases, dev.turnstile.spi.HandsOver {
                @Override public Optional<Grant> tryAcquire(AcquireRequest r) { acquires.incrementAndGet(); return redis.tryAcquire(r); }
                @Override public boolean extend(String n, String t, Duration ttl) { return redis.extend(n, t, ttl); }
                @Override public boolean release(String n, String t, Duration d) { return redis.release(n, t, d); }
                @Override public List<dev.turnstile.LockInfo> heldLocks() { return redis.heldLocks(); }
                @Override public boolean forceRelease(String n) { return redis.forceRelease(n); }
                @Override public dev.turnstile.spi.ReleaseWatch watchReleases(String n, dev.turnstile.spi.ReleaseListener l) { return redis.watchReleases(n, l); }
                @Override public String description() { return redis.description(); }

                @Override
                public HandOver handOver(String n, String t, AcquireRequest next) {
                    HandOver h = redis.handOver(n, t, next);
                    if (h.grant().isPresent()) {
                        handedOver.incrementAndGet();
                    }
                    return h;
                }
            }
            Turnstile t = Turnstile.builder(new Counting()).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).build();
            Lease first = t.tryAcquire(name).orElseThrow();
            CompletableFuture<Optional<Lease>> next = waitFor(t, name);
            Thread.sleep(300);
            int before = acquires.get();
            first.release();
            Lease second = next.get(5, TimeUnit.SECONDS).orElseThrow();
            assertThat(handedOver).hasValue(1);
            assertThat(acquires.get()).isEqualTo(before);
            assertThat(raw.sync().get("turnstile:{" + name + "}")).startsWith("token=" + second.token() + " ");
            assertThat(second.release()).hasToString("RELEASED");
            t.close();
        }
    }

    @Test
    void aWaiterThatGaveUpLeavesTheQueueWhenItsSubscriptionCloses() throws Exception {
        String name = name();
        String queue = "turnstile:{" + name + "}:waiters";
        try (LockStore a = LockStores.open(RedisServers.STANDALONE); LockStore b = LockStores.open(RedisServers.STANDALONE)) {
            Lease holder = Turnstile.builder(a).build().tryAcquire(name).orElseThrow();
            Turnstile waiter = Turnstile.builder(b).build();
            assertThat(waiter.acquire(name, LockOptions.defaults(), Duration.ofMillis(300))).isEmpty();
            assertThat(raw.sync().zcard(queue)).as("queued while it waited").isEqualTo(1);
            waiter.close(); // closes the lingering subscription
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> raw.sync().zcard(queue) == 0);
            holder.release();
        }
    }

    @Test
    void aNamedWaiterThatIsGoneDoesNotStrandTheOthers() throws Exception {
        try (LockStore a = LockStores.open(RedisServers.STANDALONE); LockStore b = LockStores.open(RedisServers.STANDALONE)) {
            String name = name();
            Lease holder = Turnstile.builder(a).build().tryAcquire(name).orElseThrow();
            // b polls only every 5 s, so only a release message wakes it in time.
            CompletableFuture<Optional<Lease>> waiting =
                    waitFor(Turnstile.builder(b).pollInterval(Duration.ofSeconds(5), Duration.ofSeconds(5)).build(), name);
            Thread.sleep(500);
            raw.sync().zadd("turnstile:{" + name + "}:waiters", 1, "a-crashed-waiter"); // first in line
            long released = System.nanoTime();
            holder.release();
            assertThat(waiting.get(4, TimeUnit.SECONDS)).isPresent();
            assertThat(Duration.ofNanos(System.nanoTime() - released)).as("woken shortly after the ghost was named")
                    .isLessThan(Duration.ofSeconds(2));
        }
    }

    @Test
    void noWaitingClientIsStarvedWhileTheLockPassesAround() throws Exception {
        String name = name();
        int clients = 3;
        List<LockStore> stores = new java.util.ArrayList<>();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(clients);
        try {
            List<String> order = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            List<java.util.concurrent.Future<?>> loops = new java.util.ArrayList<>();
            for (int i = 0; i < clients; i++) {
                LockStore s = LockStores.open(RedisServers.STANDALONE);
                stores.add(s);
                Turnstile t = Turnstile.builder(s).build();
                String me = "c" + i;
                loops.add(pool.submit(() -> {
                    while (System.nanoTime() < end) {
                        try (Lease lease = t.acquire(name, LockOptions.defaults(), Duration.ofSeconds(10)).orElseThrow()) {
                            order.add(me);
                            Thread.sleep(5);
                        }
                    }
                    return null;
                }));
            }
            for (var f : loops) {
                f.get(30, TimeUnit.SECONDS);
            }
            Map<String, Long> counts = order.stream().collect(Collectors.groupingBy(x -> x, Collectors.counting()));
            assertThat(counts).as("every client held it").hasSize(clients);
            long min = counts.values().stream().mapToLong(Long::longValue).min().orElseThrow();
            long max = counts.values().stream().mapToLong(Long::longValue).max().orElseThrow();
            assertThat(min * 10).as("shares %s: nobody is starved", counts).isGreaterThanOrEqualTo(max * 6);
        } finally {
            pool.shutdownNow();
            stores.forEach(LockStore::close);
        }
    }

    @Test
    void manyWaitersOnOneLockDoNotHammerTheServer() throws Exception {
        String name = name();
        List<LockStore> stores = new java.util.ArrayList<>();
        try (LockStore holderStore = LockStores.open(RedisServers.STANDALONE)) {
            Lease holder = Turnstile.builder(holderStore).build().tryAcquire(name).orElseThrow();
            long before = evalshaCalls();
            List<CompletableFuture<Long>> waiters = new java.util.ArrayList<>();
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(20);
            for (int i = 0; i < 20; i++) {
                LockStore s = LockStores.open(RedisServers.STANDALONE);
                stores.add(s);
                Turnstile t = Turnstile.builder(s).build();
                waiters.add(CompletableFuture.supplyAsync(() -> {
                    try (Lease lease = t.acquire(name, LockOptions.lockAtMostFor(Duration.ofSeconds(30)), Duration.ofSeconds(30))
                            .orElseThrow()) {
                        return System.nanoTime();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }, pool));
            }
            Thread.sleep(3000);
            long calls = evalshaCalls() - before;
            assertThat(calls).as("20 waiters for 3 s: a safety-net poll, not a spin").isLessThan(20 * 3 * 15);
            long released = System.nanoTime();
            holder.release();
            long first = Long.MAX_VALUE;
            for (CompletableFuture<Long> w : waiters) {
                first = Math.min(first, w.get(30, TimeUnit.SECONDS)); // each gets its turn
            }
            assertThat(Duration.ofNanos(first - released)).as("the first waiter is woken at once").isLessThan(Duration.ofMillis(500));
            pool.shutdownNow();
        } finally {
            stores.forEach(LockStore::close);
        }
    }

    long evalshaCalls() {
        String stats = raw.sync().info("commandstats");
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("cmdstat_evalsha:calls=(\\d+)").matcher(stats);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "has space", "brace{", "star*", "q?", "[x]", "back\\slash"})
    void badPrefixesAreRejected(String prefix) {
        assertThatThrownBy(() -> RedisLockStore.builder(client).keyPrefix(prefix)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("prefix");
    }

    @Test
    void aCustomPrefixIsUsed() {
        try (LockStore store = LockStores.open(RedisServers.STANDALONE + "?turnstile.prefix=app1:locks:")) {
            String name = name();
            Turnstile.builder(store).build().tryAcquire(name).orElseThrow();
            assertThat(raw.sync().exists("app1:locks:{" + name + "}")).isEqualTo(1L);
            assertThat(store.heldLocks()).extracting(i -> i.name()).contains(name);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "redis://",
        "redis://127.0.0.1:6379?turnstile.prefx=a",
        "redis://127.0.0.1:6379?turnstile.timeout=soon",
        "redlock://127.0.0.1:1,127.0.0.1:2",
        "redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3,127.0.0.1:4",
        "redlock://127.0.0.1:1,127.0.0.1:1,127.0.0.1:3",
        "redlock://h1:1,h 2:2,h3:3",
        "redlock://h1:1,h2:99999,h3:3",
        "redis-cluster://h1:notaport",
        "redis-cluster://127.0.0.1:1,127.0.0.1:2/3",
        "redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3/x",
        "redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3?turnstile.replicaAcks=1",
        "redis://127.0.0.1:6379?turnstile.replicaAcks=-1",
        "redis://127.0.0.1:6379?turnstile.replicaAcks=some",
        "redis://127.0.0.1:6379?turnstile.timeout=1s&turnstile.replicaAckTimeout=2s",
        "redis://127.0.0.1:6379?turnstile.connectTimeout=0s"
    })
    void malformedUrlsAreUsageErrors(String url) {
        assertThatThrownBy(() -> LockStores.open(url)).isInstanceOf(IllegalArgumentException.class)
                .message().isNotBlank();
    }

    @Test
    void ownersWithSpacesAndTokenLookalikesAreListedIntact() {
        try (RedisLockStore store = RedisLockStore.builder(client).build()) {
            String name = name();
            String owner = "web 1 token=fake fence=1 acquired_at=2 expires_at=3 owner=x";
            Lease lease = Turnstile.builder(store).owner(owner).build().tryAcquire(name).orElseThrow();
            assertThat(store.heldLocks()).filteredOn(i -> i.name().equals(name)).singleElement()
                    .satisfies(i -> assertThat(i.owner()).isEqualTo(owner)).satisfies(i -> assertThat(i.fence()).isEqualTo(lease.fence()));
            assertThat(store.release(name, "fake", Duration.ZERO)).isFalse();
            assertThat(store.release(name, lease.token().substring(0, 10), Duration.ZERO)).isFalse();
            assertThat(lease.release()).hasToString("RELEASED");
        }
    }

    @Test
    void namesStartingWithABraceRoundTrip() {
        try (RedisLockStore store = RedisLockStore.builder(client).build()) {
            String name = "}" + name();
            Turnstile.builder(store).build().tryAcquire(name).orElseThrow();
            assertThat(store.heldLocks()).extracting(i -> i.name()).contains(name);
        }
    }

    @Test
    void aWrongPasswordIsUnavailableAndNotPrinted() throws Exception {
        try (RedisServers servers = new RedisServers();
                LockStore store = LockStores.open("redis://default:s3cretXYZ@" + servers.server("--requirepass", "right").hostPort()
                        + "?turnstile.timeout=2s")) {
            assertThatThrownBy(() -> store.tryAcquire(new dev.turnstile.spi.AcquireRequest("x", "o", "t", Duration.ofSeconds(1))))
                    .isInstanceOf(StoreUnavailableException.class).message().doesNotContain("s3cretXYZ");
            assertThat(store.description()).doesNotContain("s3cretXYZ");
        }
    }

    /** A listener that accepts connections and never answers: a hung server, or the wrong service. */
    static final class SilentServer implements AutoCloseable {
        final java.net.ServerSocket socket;
        final List<java.net.Socket> accepted = java.util.Collections.synchronizedList(new java.util.ArrayList<>());

        SilentServer() throws java.io.IOException {
            socket = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
            Thread t = new Thread(() -> {
                try {
                    while (true) {
                        accepted.add(socket.accept());
                    }
                } catch (java.io.IOException e) {
                    // closed
                }
            }, "silent-server");
            t.setDaemon(true);
            t.start();
        }

        int port() {
            return socket.getLocalPort();
        }

        @Override
        public void close() throws java.io.IOException {
            socket.close();
            for (java.net.Socket s : accepted) {
                s.close();
            }
        }
    }

    private static Duration timeToFail(String url) {
        try (LockStore store = LockStores.open(url)) {
            Turnstile t = Turnstile.builder(store).build();
            long start = System.nanoTime();
            // Through Turnstile: a failed acquire is followed by a best-effort release, which must
            // not pay a second connect timeout.
            assertThatThrownBy(() -> t.tryAcquire(name())).isInstanceOf(StoreUnavailableException.class);
            return Duration.ofNanos(System.nanoTime() - start);
        }
    }

    @Test
    void aServerThatAcceptsAndNeverAnswersIsUnavailableAfterOneConnectTimeout() throws Exception {
        try (SilentServer silent = new SilentServer()) {
            assertThat(timeToFail("redis://127.0.0.1:" + silent.port() + "?turnstile.connectTimeout=1s"))
                    .isBetween(Duration.ofMillis(900), Duration.ofMillis(1900));
            assertThat(timeToFail("redis://127.0.0.1:" + silent.port() + "?turnstile.timeout=2s"))
                    .as("the connect timeout defaults to the command timeout").isBetween(Duration.ofMillis(1900), Duration.ofMillis(3500));
        }
    }

    @Test
    void tlsAgainstAPlainPortFailsAfterOneConnectTimeout() {
        assertThat(timeToFail("rediss://127.0.0.1:6379?turnstile.connectTimeout=1s")).isLessThan(Duration.ofMillis(1900));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "redis://user:Pa@ss/wo:rd?x#y%z@127.0.0.1:1?turnstile.connectTimeout=1s",
        "redis://user:Pa%40ss%2Fwo%3Ard%3Fx%23y%25z@127.0.0.1:1?turnstile.connectTimeout=1s",
        "rediss://:Pa%40ss%2Fwo%3Ard%3Fx%23y%25z@127.0.0.1:1/2?turnstile.connectTimeout=1s",
        "redis-sentinel://:Pa%40ss%2Fwo%3Ard%3Fx%23y%25z@127.0.0.1:1?turnstile.connectTimeout=1s#locks",
        "redis-cluster://user:Pa@ss/wo:rd?x#y%z@127.0.0.1:1,127.0.0.1:2?turnstile.connectTimeout=1s",
        "redis-cluster://user:Pa%40ss%2Fwo%3Ard%3Fx%23y%25z@127.0.0.1:1,127.0.0.1:2?turnstile.connectTimeout=1s",
        "redlock://user:Pa@ss/wo:rd?x#y%z@127.0.0.1:1,127.0.0.1:2,127.0.0.1:3?turnstile.connectTimeout=1s",
        "redlock://user:Pa%40ss%2Fwo%3Ard%3Fx%23y%25z@127.0.0.1:1,127.0.0.1:2,127.0.0.1:3",
        "redis://user:Pa@ss/wo:rd?x#y%z@127.0.0.1:1?turnstile.bogus=1",
        "redis://user:Pa@ss/wo:rd?x#y%z@127.0.0.1:1?turnstile.timeout=soon"
    })
    void noMessageShowsThePasswordWhateverItsCharacters(String url) {
        List<String> fragments = List.of("Pa@ss", "ss/wo", "wo:rd", "rd?x", "x#y", "y%z", "Pa%40ss", "%2Fwo", "%3Fx%23");
        List<String> messages = new java.util.ArrayList<>();
        try (LockStore store = LockStores.open(url)) {
            messages.add(store.description());
            try {
                store.tryAcquire(new AcquireRequest("x", "o", "t", Duration.ofSeconds(1)));
            } catch (RuntimeException e) {
                for (Throwable t = e; t != null; t = t.getCause()) {
                    messages.add(String.valueOf(t.getMessage()));
                }
            }
        } catch (IllegalArgumentException e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                messages.add(String.valueOf(t.getMessage()));
            }
        }
        assertThat(messages).isNotEmpty();
        for (String m : messages) {
            for (String f : fragments) {
                assertThat(m).as("message %s", m).doesNotContain(f);
            }
        }
    }

    @Test
    void tlsAgainstAPlainPortIsUnavailableNotAHang() {
        try (LockStore store = LockStores.open("rediss://127.0.0.1:6379?turnstile.timeout=2s")) {
            long start = System.nanoTime();
            assertThatThrownBy(store::heldLocks).isInstanceOf(StoreUnavailableException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(15));
        }
    }
}
