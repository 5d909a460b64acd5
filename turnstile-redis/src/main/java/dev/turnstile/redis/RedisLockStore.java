package dev.turnstile.redis;

import static dev.turnstile.redis.RedisScripts.ACQUIRE;
import static dev.turnstile.redis.RedisScripts.EXTEND;
import static dev.turnstile.redis.RedisScripts.FORCE_RELEASE;
import static dev.turnstile.redis.RedisScripts.PRUNE;
import static dev.turnstile.redis.RedisScripts.HAND_OVER;
import static dev.turnstile.redis.RedisScripts.KEPT;
import static dev.turnstile.redis.RedisScripts.RELEASE;
import static dev.turnstile.redis.RedisScripts.RELEASE_AT_LEAST;

import dev.turnstile.LockInfo;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.HandOver;
import dev.turnstile.spi.HandsOver;
import dev.turnstile.spi.PrunesNames;
import dev.turnstile.spi.StoreClock;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.NotifiesReleases;
import dev.turnstile.spi.ReleaseListener;
import dev.turnstile.spi.ReleaseResult;
import dev.turnstile.spi.ReleaseWatch;
import io.lettuce.core.KeyScanArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock store on Redis (standalone, Sentinel or Cluster) over Lettuce. Each lock is one string,
 * {@code <prefix>{<name>}}, whose value tells who holds it, since when, until when (server times)
 * and with which fence ({@code LockValue}), and whose {@code PX} TTL alone decides expiry, on the
 * server's clock; {@code lockAtLeastFor} is decided on the server's clock too. How it works and what
 * it guarantees across restarts and failovers is described once, in {@code docs/stores/redis.md};
 * this class composes the parts that do it:
 *
 * <ul>
 *   <li>{@code RedisScripts}: the Lua scripts (files beside this class, which the benchmark reads
 *       too), one {@code EVALSHA} per acquire, extend, release and hand-over;</li>
 *   <li>{@code ScriptRunner}: the command connection, opened on first use, and the scripts run on it,
 *       each followed by a {@code WAIT} where replicas must acknowledge it ({@code ReplicaAcks});</li>
 *   <li>{@code ReleaseChannel}: the pub/sub connection on which a release wakes the longest-queued
 *       waiter of {@code <prefix>{<name>}:waiters};</li>
 *   <li>{@code RedisErrors}: failure messages that name the fix.</li>
 * </ul>
 *
 * <p>Past 400 lines only by its public {@link Builder}, each of whose options documents itself.
 */
public final class RedisLockStore implements LockStore, NotifiesReleases, HandsOver, StoreClock, PrunesNames {
    private static final Logger log = LoggerFactory.getLogger(RedisLockStore.class);
    private static final String DEFAULT_PREFIX = "turnstile:";

    private final String prefix;
    private final String description;
    private final List<AutoCloseable> owned;
    /** Names this store in waiter queues: one per store, shared by its waiters. */
    private final String waiterId = Long.toHexString(new SecureRandom().nextLong() | Long.MIN_VALUE);
    private volatile boolean closed;
    private final ScriptRunner scripts;
    private final ReleaseChannel releases;

    private RedisLockStore(Builder b) {
        this.prefix = b.prefix;
        this.description = b.description + " (prefix " + b.prefix + ")";
        this.owned = b.owned;
        this.scripts = new ScriptRunner(b.connector, b.syncOf, b.cluster, b.replicaAcks, b.replicaAckTimeout,
                b.passwordUser, b.tls, description, this::checkOpen);
        this.releases = new ReleaseChannel(b.pubSubConnector, waiterId, description, this::leaveQueue);
    }

    /**
     * Starts a builder over a standalone or Sentinel client. The store opens its own connections
     * (one for commands, one for release notifications) on first use and closes them on
     * {@link #close()}; the client stays the caller's.
     *
     * @param client the Lettuce client
     * @return a builder
     * @throws IllegalArgumentException if {@code client} is null
     */
    public static Builder builder(RedisClient client) {
        requireClient(client);
        return new Builder(client::connect, c -> ((StatefulRedisConnection<String, String>) c).sync(),
                client::connectPubSub, "redis", false);
    }

    /**
     * Starts a builder over a Redis Cluster client.
     *
     * @param client the Lettuce cluster client
     * @return a builder
     * @throws IllegalArgumentException if {@code client} is null
     */
    public static Builder builder(RedisClusterClient client) {
        requireClient(client);
        return new Builder(client::connect,
                c -> ((StatefulRedisClusterConnection<String, String>) c).sync(),
                client::connectPubSub, "redis-cluster", true);
    }

    private static void requireClient(Object client) {
        if (client == null) {
            throw new IllegalArgumentException("client is null: give the application's Lettuce client, e.g. RedisClient.create(\"redis://host:6379\")");
        }
    }

    /**
     * Returns the key of a lock's value, for {@code redis-cli GET}.
     *
     * @param name the lock name
     * @return {@code <prefix>{<name>}}
     */
    public String lockKey(String name) {
        // A name starting with '}' would make an empty hash tag, and Redis would then hash the
        // whole key, splitting lock and fence over two slots. A marker that no valid name can
        // contain (names have no control characters) keeps the tag non-empty.
        return prefix + "{" + (name.startsWith("}") ? EMPTY_TAG_GUARD : "") + name + "}";
    }

    private static final String EMPTY_TAG_GUARD = "\u0001";

    private static final String FENCE = ":fence";
    private static final String WAITERS = ":waiters";

    private String waitersKey(String name) {
        return lockKey(name) + WAITERS;
    }

    /** Where the release scripts publish: {@code KEYS[1] .. ':released'}. */
    private String channel(String name) {
        return lockKey(name) + ":released";
    }

    @Override
    public Optional<Grant> tryAcquire(AcquireRequest r) {
        String key = lockKey(r.name());
        long ttlMillis = r.ttl().toMillis();
        long now = System.currentTimeMillis();
        String head = LockValue.head(r.token());
        String tail = LockValue.tail(r.owner());
        String ttl = Long.toString(ttlMillis);
        // Every script key and argument costs server time: the uncontended path passes none it need not.
        String[] keys = r.waiting() ? new String[] {key, key + FENCE, key + WAITERS} : new String[] {key, key + FENCE};
        String[] args = r.waiting() ? new String[] {head, tail, ttl, waiterId} : new String[] {head, tail, ttl};
        ScriptRunner.Acked fence = scripts.runAcked("acquire", r.name(), ACQUIRE, keys, args);
        if (fence.result() == 0L) {
            return Optional.empty();
        }
        if (fence.unacknowledged()) {
            giveBack(r.name(), r.token());
            throw scripts.notAcknowledged("acquired lock '" + r.name() + "'", fence, "gave it back");
        }
        return Optional.of(grant(fence.result(), now, ttlMillis));
    }

    @Override
    public boolean extend(String name, String token, Duration ttl) {
        ScriptRunner.Acked ok = scripts.runAcked("extend", name, EXTEND, new String[] {lockKey(name)}, token, Long.toString(ttl.toMillis()));
        if (ok.result() == 1L && ok.unacknowledged()) {
            throw scripts.notAcknowledged("extended lock '" + name + "'", ok, "the extension may be lost in a failover");
        }
        return ok.result() == 1L;
    }

    @Override
    public boolean release(String name, String token, Duration lockAtLeastFor) {
        return releaseReporting(name, token, lockAtLeastFor) != ReleaseResult.NOT_HELD;
    }

    /**
     * Releases as {@link #release} does and says what the script applied: {@code FREED} (the key
     * was deleted) or {@code KEPT_FOR_AT_LEAST} (acquired_at plus lockAtLeastFor was still ahead by
     * the server's TIME, and the key's TTL now ends there).
     */
    @Override
    public ReleaseResult releaseReporting(String name, String token, Duration lockAtLeastFor) {
        String key = lockKey(name);
        String[] keys = {key, key + WAITERS};
        Long done = lockAtLeastFor.isZero()
                ? scripts.run("release", name, RELEASE, ScriptOutputType.INTEGER, keys, token)
                : scripts.run("release", name, RELEASE_AT_LEAST, ScriptOutputType.INTEGER, keys, token,
                        Long.toString(lockAtLeastFor.toMillis()));
        return done == KEPT ? ReleaseResult.KEPT_FOR_AT_LEAST : done == 1L ? ReleaseResult.FREED : ReleaseResult.NOT_HELD;
    }

    @Override
    public HandOver handOver(String name, String token, AcquireRequest next) {
        if (!next.name().equals(name)) {
            throw new IllegalArgumentException("a lock is handed over under its own name, not '" + next.name() + "'");
        }
        String key = lockKey(name);
        long ttlMillis = next.ttl().toMillis();
        long now = System.currentTimeMillis();
        ScriptRunner.Acked handed = scripts.runAcked("hand over", name, HAND_OVER, new String[] {key, key + FENCE, key + WAITERS},
                token, LockValue.head(next.token()), LockValue.tail(next.owner()), Long.toString(ttlMillis), waiterId);
        long fence = handed.result();
        if (fence == 0L) {
            return HandOver.notHeld();
        }
        if (fence > 0 && handed.unacknowledged()) {
            // The old lease is over either way; the next holder's is not safe: give it back, and
            // let the waiter acquire (and be told of the replicas) on its own.
            log.warn("{}", scripts.notAcknowledged("handed lock '" + name + "' over", handed, "gave it back").getMessage());
            giveBack(name, next.token());
            return HandOver.releasedOnly();
        }
        return fence < 0 ? HandOver.releasedOnly() : HandOver.handedTo(grant(fence, now, ttlMillis));
    }

    /**
     * A grant with the client's times (the lease's {@code acquiredAt} for the holder to read; the
     * value in Redis holds the server's, which {@link #heldLocks} shows).
     */
    private static Grant grant(long fence, long now, long ttlMillis) {
        return new Grant(fence, Instant.ofEpochMilli(now), Instant.ofEpochMilli(now + ttlMillis));
    }

    @Override
    public boolean forceRelease(String name) {
        Long ok = scripts.run("force-release", name, FORCE_RELEASE, ScriptOutputType.INTEGER,
                new String[] {lockKey(name), waitersKey(name)}, "");
        return ok == 1L;
    }

    @Override
    public List<LockInfo> heldLocks() {
        try {
            RedisClusterCommands<String, String> cmd = scripts.commands();
            List<LockInfo> out = new ArrayList<>();
            // SCAN may return a key twice (while the server resizes its table): each is read once
            java.util.Set<String> seen = new java.util.HashSet<>();
            KeyScanArgs args = KeyScanArgs.Builder.type("string").match(prefix + "{*").limit(LIST_BATCH);
            List<String> batch = new ArrayList<>(LIST_BATCH);
            for (var it = io.lettuce.core.ScanIterator.scan(cmd, args); it.hasNext(); ) {
                String key = it.next();
                if (!key.endsWith("}") || !seen.add(key)) {
                    continue; // a fence counter, or a key the scan returned before
                }
                batch.add(key);
                if (batch.size() == LIST_BATCH) {
                    readLocks(cmd, batch, out);
                }
            }
            readLocks(cmd, batch, out);
            out.sort(Comparator.comparing(LockInfo::name));
            return out;
        } catch (RedisException e) {
            throw scripts.unavailable("list locks", e);
        }
    }

    /**
     * Deletes the fence counters ({@code <prefix>{<name>}:fence}, the only key a free name keeps) of
     * free names whose fence is more than {@code unusedFor} below the server's clock: one
     * {@code SCAN} over the prefix (every master of a cluster) and one script per counter, which
     * checks and deletes atomically ({@code prune.lua}). Because every fence is floored by the
     * server's clock, a name used again starts above its old fences, provided the server's clock has
     * not stepped back by more than {@code unusedFor} since: choose the period with that in mind
     * (a day or more). Counters written before fences were floored by the clock are far below it
     * and are pruned like any other.
     */
    @Override
    public long pruneUnused(Duration unusedFor) {
        String micros = Long.toString(Math.multiplyExact(unusedFor.toMillis(), 1000L));
        long pruned = 0;
        try {
            RedisClusterCommands<String, String> cmd = scripts.commands();
            KeyScanArgs args = KeyScanArgs.Builder.type("string").match(prefix + "{*}" + FENCE).limit(LIST_BATCH);
            for (var it = io.lettuce.core.ScanIterator.scan(cmd, args); it.hasNext(); ) {
                String counter = it.next();
                String lock = counter.substring(0, counter.length() - FENCE.length());
                Long done = scripts.run("prune", lock, PRUNE, ScriptOutputType.INTEGER, new String[] {lock, counter}, micros);
                pruned += done;
            }
            return pruned;
        } catch (RedisException e) {
            throw scripts.unavailable("prune unused lock names (" + pruned + " pruned before the failure)", e);
        }
    }

    /**
     * Reads the Redis server's clock ({@code TIME}), the one the lease scripts read; on a cluster,
     * one node's (the node that holds a given lease may differ by its clock's skew).
     *
     * @return the server's time, to the millisecond
     * @throws dev.turnstile.StoreUnavailableException if Redis cannot be reached
     */
    @Override
    public Instant now() {
        try {
            List<String> time = scripts.commands().time();
            return Instant.ofEpochSecond(Long.parseLong(time.get(0)), Long.parseLong(time.get(1)) * 1_000)
                    .truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        } catch (RedisException e) {
            throw scripts.unavailable("read the clock", e);
        }
    }

    /** Keys read per MGET while listing: one round trip per batch, not per lock (10,000 locks took 0.8 s one by one). */
    private static final int LIST_BATCH = 500;

    /**
     * Reads a batch of lock keys with one MGET (split by slot on a cluster, by Lettuce) and empties
     * the batch. A key that expired between the scan and the read is left out.
     */
    private void readLocks(RedisClusterCommands<String, String> cmd, List<String> batch, List<LockInfo> out) {
        if (batch.isEmpty()) {
            return;
        }
        for (io.lettuce.core.KeyValue<String, String> kv : cmd.mget(batch.toArray(new String[0]))) {
            if (!kv.hasValue()) {
                continue;
            }
            String key = kv.getKey();
            String name = key.substring(prefix.length() + 1, key.length() - 1);
            LockInfo info = LockValue.parse(name.startsWith(EMPTY_TAG_GUARD) ? name.substring(1) : name, kv.getValue());
            if (info != null) {
                out.add(info);
            }
        }
        batch.clear();
    }

    @Override
    public ReleaseWatch watchReleases(String name, ReleaseListener listener) {
        checkOpen();
        return releases.watch(name, channel(name), listener);
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        releases.close();
        scripts.close();
        owned.forEach(ScriptRunner::closeQuietly);
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    /** Using a closed store is a programming error, not an outage: say so rather than "connection closed". */
    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the LockStore " + description + " is closed: build a new one, and keep it "
                    + "open while a Turnstile uses it");
        }
    }

    /** Best effort: frees a token that was granted but not acknowledged. */
    private void giveBack(String name, String token) {
        try {
            release(name, token, Duration.ZERO);
        } catch (RuntimeException e) {
            log.debug("cannot give back lock '{}': {}", name, e.toString());
        }
    }

    /** The server's {@code run_id} (see {@link ScriptRunner#serverRunId}). */
    @Nullable String serverRunId() {
        return scripts.serverRunId();
    }

    /** Opens the command connection now rather than on first use. */
    void connect() {
        scripts.connect();
    }

    /** The command connection's owner, whose monitor its opening and {@link #close} share (for tests). */
    ScriptRunner scripts() {
        return scripts;
    }

    /**
     * Best effort, and without waiting for the reply (this runs when a client closes, perhaps with
     * the server gone): a waiter that stopped waiting should not be named by the next release. If
     * this is lost, the next release names a waiter that is gone, and the others try 5 ms later.
     */
    private void leaveQueue(String name) {
        StatefulConnection<String, String> c = scripts.connectionIfOpen();
        if (c == null || !c.isOpen()) {
            return;
        }
        try {
            c.dispatch(new Command<>(CommandType.ZREM, new IntegerOutput<>(StringCodec.UTF8),
                    new CommandArgs<>(StringCodec.UTF8).addKey(waitersKey(name)).addValue(waiterId)));
        } catch (RedisException e) {
            log.debug("cannot leave the waiter queue of '{}': {}", name, e.toString());
        }
    }

    /** Builds a {@link RedisLockStore}. Not thread-safe. */
    public static final class Builder {
        private final Supplier<StatefulConnection<String, String>> connector;
        private final Function<StatefulConnection<String, String>, RedisClusterCommands<String, String>> syncOf;
        private final Supplier<StatefulRedisPubSubConnection<String, String>> pubSubConnector;
        private final boolean cluster;
        private String prefix = DEFAULT_PREFIX;
        private @Nullable String description;
        private int replicaAcks = ReplicaAcks.AUTO;
        private Duration replicaAckTimeout = ReplicaAcks.DEFAULT_TIMEOUT;
        private @Nullable String passwordUser;
        private boolean tls;
        private final List<AutoCloseable> owned = new ArrayList<>();

        @SuppressWarnings("unchecked")
        private <C extends StatefulConnection<String, String>, P extends StatefulRedisPubSubConnection<String, String>> Builder(
                Supplier<C> connector, Function<StatefulConnection<String, String>, RedisClusterCommands<String, String>> syncOf,
                Supplier<P> pubSubConnector, String description, boolean cluster) {
            this.cluster = cluster;
            this.connector = (Supplier<StatefulConnection<String, String>>) connector;
            this.syncOf = syncOf;
            this.pubSubConnector = (Supplier<StatefulRedisPubSubConnection<String, String>>) pubSubConnector;
            this.description = description;
        }

        /**
         * Sets the key prefix. Default {@code turnstile:}.
         *
         * @param prefix 1 to 64 printable characters without braces, glob characters or white space
         * @return this builder
         * @throws IllegalArgumentException if the prefix could break hash tags or key scans
         */
        public Builder keyPrefix(String prefix) {
            if (prefix == null || prefix.isEmpty() || prefix.length() > 64 || !prefix.matches("[!-~&&[^{}*?\\[\\]\\\\]]+")) {
                throw new IllegalArgumentException("key prefix '" + prefix + "' is not allowed: use 1 to 64 printable "
                        + "ASCII characters without braces, * ? [ ] \\ or spaces (for example 'turnstile:')");
            }
            this.prefix = prefix;
            return this;
        }

        /**
         * Sets how the store names itself in messages. Must not contain secrets.
         *
         * @param description for example {@code redis://cache:6379}
         * @return this builder
         * @throws IllegalArgumentException if {@code description} is null
         */
        public Builder description(String description) {
            if (description == null) {
                throw new IllegalArgumentException("description is null: give a text that names the server without secrets, "
                        + "or do not set it");
            }
            this.description = description;
            return this;
        }

        /**
         * Sets how many replicas must acknowledge an acquire, extend or hand-over (Redis
         * {@code WAIT}) before it counts as done. By default (until this is called) the store waits
         * for one replica when the master has at least one connected replica, and for none when it
         * has none; the replica count is read with {@code INFO replication} when the store
         * connects and again at most every 5 s (on Cluster, from the client's view of the
         * topology). A master that has had a replica keeps needing one when it later reports none
         * (cut off from its replicas, its grants are the ones a failover loses); a new master (a
         * new replication ID) is learned afresh. An explicit count is waited for whatever the master reports: with no replica
         * connected, every acquire fails. {@code 0} never waits. A write that is not acknowledged
         * in time is not reported as done: an acquire gives its token back (best effort) and throws
         * {@link StoreUnavailableException}; an extend throws it; a hand-over gives the next
         * holder's token back and reports the lock released. Releases never wait.
         *
         * <p>{@code WAIT} only narrows the window in which a failover loses a lock: the promoted
         * replica may still be one that had not acknowledged it, and a replica without persistence
         * that restarts forgets it. Redis 7.0 has no {@code WAITAOF} (7.2 does), so an
         * acknowledgement means "in the replica's memory", not "on its disk".
         *
         * @param count 0 or more
         * @return this builder
         * @throws IllegalArgumentException if the count is negative
         */
        public Builder replicaAcks(int count) {
            if (count < 0) {
                throw new IllegalArgumentException("replica acknowledgements must be 0 or more, got " + count);
            }
            this.replicaAcks = count;
            return this;
        }

        /**
         * Sets how long to wait for the replicas' acknowledgement. Default 1 s. Keep it below the
         * client's command timeout, or the wait is cut short by that timeout.
         *
         * @param timeout positive, at most a day
         * @return this builder
         * @throws IllegalArgumentException if the timeout is not positive or over a day
         */
        public Builder replicaAckTimeout(Duration timeout) {
            if (timeout == null || timeout.isNegative() || timeout.isZero() || timeout.compareTo(Duration.ofDays(1)) > 0) {
                throw new IllegalArgumentException("replica acknowledgement timeout must be positive and at most a day, got " + timeout);
            }
            this.replicaAckTimeout = timeout;
            return this;
        }

        /** The URL asked for TLS (rediss://): a handshake that stalls is then named as TLS to a plain server. */
        Builder tls() {
            this.tls = true;
            return this;
        }

        /** The URL gave a password for this user: warn once connected if the server checks none. */
        Builder passwordGiven(String user) {
            this.passwordUser = user;
            return this;
        }

        /** The store closes these (a client it made) on close. */
        Builder owning(AutoCloseable resource) {
            owned.add(resource);
            return this;
        }

        /**
         * Builds the store. Connects on first use.
         *
         * @return the store
         */
        public RedisLockStore build() {
            return new RedisLockStore(this);
        }
    }
}
