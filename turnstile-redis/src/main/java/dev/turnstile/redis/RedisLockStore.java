package dev.turnstile.redis;

import static dev.turnstile.redis.RedisScripts.ACQUIRE;
import static dev.turnstile.redis.RedisScripts.EXTEND;
import static dev.turnstile.redis.RedisScripts.FORCE_RELEASE;
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
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.NotifiesReleases;
import dev.turnstile.spi.ReleaseListener;
import dev.turnstile.spi.ReleaseResult;
import dev.turnstile.spi.ReleaseWatch;
import io.lettuce.core.KeyScanArgs;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
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
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock store on Redis (standalone, Sentinel or Cluster) over Lettuce. Each lock is one string,
 * {@code <prefix>{<name>}} (a name starting with {@code '}'} gets the character U+0001 after the
 * opening brace, so the hash tag is never empty), whose value reads
 * {@code token=<token> fence=<n> acquired_at=<ms> expires_at=<ms> owner=<owner>} (epoch
 * milliseconds by the server's clock, from {@code TIME} in the scripts) and whose TTL is set with
 * {@code PX} (which alone decides expiry, on the server's clock), so
 * {@code redis-cli GET 'turnstile:{nightly}'} shows who holds it, since when, until when and with
 * which fence. The fence counter {@code <prefix>{<name>}:fence}
 * shares the lock's hash slot. The guarantees and options, for users: {@code docs/stores/redis.md}.
 *
 * <p>{@code lockAtLeastFor} is decided on the server's clock too: a release keeps the lock until
 * {@code acquired_at} (stamped by the server at the acquire and never rewritten) plus
 * {@code lockAtLeastFor}, compared with the server's {@code TIME}, so a client whose wall clock is
 * stepped neither frees the lock early nor keeps it taken for the size of the step, and
 * {@link #releaseReporting} says which of the two the script applied.
 *
 * <p>Acquire, extend and release are one {@code EVALSHA} each (a script that is recovered with
 * {@code EVAL} after a {@code NOSCRIPT}; the scripts are Lua files beside this class, read by
 * {@code RedisScripts}). Waiting clients queue in {@code <prefix>{<name>}:waiters}
 * while the lock is busy; a release publishes the released token and the longest-queued waiter on
 * {@code <prefix>{<name>}:released}, so that waiter is woken at once (the others a few
 * milliseconds later, in case it is gone) instead of everyone polling or racing.
 *
 * <p>Fences never repeat, on any topology and across a failover or a restart without
 * persistence: every fence is at least the server's {@code TIME} (in µs, to the millisecond below),
 * so a promoted replica whose counter missed the last writes, or a server that lost its counter,
 * still issues fences above every fence issued before (as long as the servers' clocks agree to
 * within the time a failover takes; see the comment on the scripts). Exclusion does not survive a
 * lost write: a restarted server without persistence, or a promoted replica that missed the
 * acquire, has forgotten the holder. Replica acknowledgement ({@link Builder#replicaAcks(int)})
 * narrows that window; {@code appendfsync always}, or a restart only after the longest TTL, closes
 * it for restarts.
 */
public final class RedisLockStore implements LockStore, NotifiesReleases, HandsOver {
    private static final Logger log = LoggerFactory.getLogger(RedisLockStore.class);


    private static final String DEFAULT_PREFIX = "turnstile:";
    /** After a failed connect, calls fail at once for this long instead of each paying a connect timeout. */
    private static final long CONNECT_RETRY_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final Pattern VALUE =
            Pattern.compile("token=.*? fence=(\\d+) acquired_at=(\\d+) expires_at=(\\d+) owner=(.*)", Pattern.DOTALL);

    private final Supplier<StatefulConnection<String, String>> connector;
    private final Function<StatefulConnection<String, String>, RedisClusterCommands<String, String>> syncOf;
    private final boolean cluster;
    /** How many replicas must acknowledge a write. */
    private final ReplicaAcks replicaAcks;
    /** The user whose password the URL gave (checked once connected), or null if none was given. */
    private final String passwordUser;
    /** Whether the URL asked for TLS ({@code rediss://}), for the failure messages ({@link RedisErrors}). */
    private final boolean tls;
    /** When the last connect failed, and why: calls fail fast for a moment after (see {@link #commands()}). */
    private volatile long connectFailedAt;
    private volatile RedisException connectFailure;
    private final String prefix;
    private final String description;
    private final List<AutoCloseable> owned;
    private final Map<String, String> shas = new ConcurrentHashMap<>();
    /** Names this store in waiter queues: one per store, shared by its waiters. */
    private final String waiterId = Long.toHexString(new SecureRandom().nextLong() | Long.MIN_VALUE);

    private volatile boolean closed;
    private volatile StatefulConnection<String, String> connection;
    private volatile RedisClusterCommands<String, String> redis;
    /** The async API of {@link #connection}; set before {@link #redis}, so a caller that saw redis sees it. */
    private volatile RedisClusterAsyncCommands<String, String> async;
    private final ReleaseChannel releases;

    private RedisLockStore(Builder b) {
        this.connector = b.connector;
        this.syncOf = b.syncOf;
        this.cluster = b.cluster;
        this.replicaAcks = new ReplicaAcks(b.replicaAcks, b.replicaAckTimeout, b.cluster, () -> connection, this::commands);
        this.passwordUser = b.passwordUser;
        this.tls = b.tls;
        this.prefix = b.prefix;
        this.description = b.description + " (prefix " + b.prefix + ")";
        this.owned = b.owned;
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
        String head = valueHead(r.token());
        String tail = valueTail(r.owner());
        String ttl = Long.toString(ttlMillis);
        // Every script key and argument costs server time: the uncontended path passes none it need not.
        String[] keys = r.waiting() ? new String[] {key, key + FENCE, key + WAITERS} : new String[] {key, key + FENCE};
        String[] args = r.waiting() ? new String[] {head, tail, ttl, waiterId} : new String[] {head, tail, ttl};
        Acked fence = runAcked("acquire", r.name(), ACQUIRE, keys, args);
        if (fence.result() == 0L) {
            return Optional.empty();
        }
        if (fence.unacknowledged()) {
            giveBack(r.name(), r.token());
            throw notAcknowledged("acquired lock '" + r.name() + "'", fence, "gave it back");
        }
        return Optional.of(grant(fence.result(), now, ttlMillis));
    }

    @Override
    public boolean extend(String name, String token, Duration ttl) {
        Acked ok = runAcked("extend", name, EXTEND, new String[] {lockKey(name)}, token, Long.toString(ttl.toMillis()));
        if (ok.result() == 1L && ok.unacknowledged()) {
            throw notAcknowledged("extended lock '" + name + "'", ok, "the extension may be lost in a failover");
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
                ? run("release", name, RELEASE, ScriptOutputType.INTEGER, keys, token)
                : run("release", name, RELEASE_AT_LEAST, ScriptOutputType.INTEGER, keys, token,
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
        Acked handed = runAcked("hand over", name, HAND_OVER, new String[] {key, key + FENCE, key + WAITERS},
                token, valueHead(next.token()), valueTail(next.owner()), Long.toString(ttlMillis), waiterId);
        long fence = handed.result();
        if (fence == 0L) {
            return HandOver.notHeld();
        }
        if (fence > 0 && handed.unacknowledged()) {
            // The old lease is over either way; the next holder's is not safe: give it back, and
            // let the waiter acquire (and be told of the replicas) on its own.
            log.warn("{}", notAcknowledged("handed lock '" + name + "' over", handed, "gave it back").getMessage());
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

    /** The value up to its fence: {@code token=<token> fence=}. */
    private static String valueHead(String token) {
        return "token=" + token + " fence=";
    }

    /** The value after its times: {@code  owner=<owner>} (the script writes fence and times before it). */
    private static String valueTail(String owner) {
        return " owner=" + owner;
    }

    @Override
    public boolean forceRelease(String name) {
        Long ok = run("force-release", name, FORCE_RELEASE, ScriptOutputType.INTEGER,
                new String[] {lockKey(name), waitersKey(name)}, "");
        return ok == 1L;
    }

    @Override
    public List<LockInfo> heldLocks() {
        try {
            RedisClusterCommands<String, String> cmd = commands();
            List<LockInfo> out = new ArrayList<>();
            KeyScanArgs args = KeyScanArgs.Builder.type("string").match(prefix + "{*").limit(500);
            for (var it = io.lettuce.core.ScanIterator.scan(cmd, args); it.hasNext(); ) {
                String key = it.next();
                if (!key.endsWith("}")) {
                    continue; // a fence counter
                }
                String value = cmd.get(key);
                Matcher m = value == null ? null : VALUE.matcher(value);
                if (m != null && m.matches()) {
                    String name = key.substring(prefix.length() + 1, key.length() - 1);
                    name = name.startsWith(EMPTY_TAG_GUARD) ? name.substring(1) : name;
                    out.add(new LockInfo(name, m.group(4), Long.parseLong(m.group(1)),
                            Instant.ofEpochMilli(Long.parseLong(m.group(2))), Instant.ofEpochMilli(Long.parseLong(m.group(3)))));
                }
            }
            out.sort(Comparator.comparing(LockInfo::name));
            return out;
        } catch (RedisException e) {
            throw unavailable("list locks", e);
        }
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
        closeConnection(connection);
        owned.forEach(RedisLockStore::closeQuietly);
    }

    /**
     * Closes one of the store's connections unless it is closed already: a client shut down before
     * the store (Spring Data Redis stops its connection factory, and with it the client, before the
     * store bean is destroyed) has closed it, and closing it again has Lettuce log "Connection is
     * already closed" at WARN on every shutdown.
     */
    static void closeConnection(StatefulConnection<?, ?> c) {
        if (c instanceof RedisChannelHandler<?, ?> handler && handler.isClosed()) {
            return;
        }
        closeQuietly(c);
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

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                log.debug("close failed", e);
            }
        }
    }

    /**
     * A write's integer reply, and how many replicas acknowledged it out of how many were wanted.
     *
     * @param result the script's reply
     * @param acks replicas that acknowledged it ({@code WAIT}'s reply; 0 when not asked)
     * @param required replicas wanted (0: none asked)
     */
    private record Acked(long result, long acks, int required) {
        boolean unacknowledged() {
            return acks < required;
        }
    }

    /**
     * Runs a write script, then, if replicas must acknowledge it, {@code WAIT}s for them on the
     * same connection (WAIT covers everything the connection wrote before it). On a standalone or
     * Sentinel master the two go out together (one round trip); on Cluster the WAIT follows on the
     * connection to the key's master.
     */
    private Acked runAcked(String verb, String name, String script, String[] keys, String... args) {
        int required;
        try {
            required = replicaAcks.required(keys[0]);
        } catch (RedisException e) {
            throw unavailable(verb + " lock '" + name + "'", e);
        }
        if (required == 0) {
            Long result = run(verb, name, script, ScriptOutputType.INTEGER, keys, args);
            return new Acked(result, 0, 0);
        }
        try {
            long ackMillis = replicaAcks.timeout().toMillis();
            if (cluster) {
                Long result = run(verb, name, script, ScriptOutputType.INTEGER, keys, args);
                StatefulRedisConnection<String, String> node = replicaAcks.masterConnection(keys[0]);
                return new Acked(result, node.sync().waitForReplication(required, ackMillis), required);
            }
            RedisClusterCommands<String, String> cmd = commands();
            @SuppressWarnings("unchecked")
            RedisClusterAsyncCommands<String, String> async = ((StatefulRedisConnection<String, String>) connection).async();
            long limit = connection.getTimeout().toNanos() + replicaAcks.timeout().toNanos();
            String sha = sha(script, cmd);
            RedisFuture<Long> write = async.evalsha(sha, ScriptOutputType.INTEGER, keys, args);
            RedisFuture<Long> wait = async.waitForReplication(required, ackMillis);
            Long result;
            try {
                result = LettuceFutures.awaitOrCancel(write, limit, TimeUnit.NANOSECONDS);
            } catch (RedisNoScriptException e) {
                LettuceFutures.awaitOrCancel(wait, limit, TimeUnit.NANOSECONDS);
                result = LettuceFutures.awaitOrCancel(async.<Long>eval(script, ScriptOutputType.INTEGER, keys, args), limit,
                        TimeUnit.NANOSECONDS);
                wait = async.waitForReplication(required, ackMillis);
            }
            return new Acked(result, LettuceFutures.awaitOrCancel(wait, limit, TimeUnit.NANOSECONDS), required);
        } catch (RedisException e) {
            throw unavailable(verb + " lock '" + name + "'", e);
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

    private StoreUnavailableException notAcknowledged(String what, Acked a, String consequence) {
        return replicaAcks.notAcknowledged(what, description, a.acks(), a.required(), consequence);
    }

    /**
     * EVALSHA, falling back to EVAL (which also caches the script) when the server does not know it.
     *
     * <p>Through the async API, awaited here with the connection's timeout, which is what the sync
     * API does too: the sync API goes through a JDK proxy that looks the method up and calls it by
     * reflection on every call, which the acquire/release hot path does not need (profiled: see
     * docs/benchmarks.md). Timeouts, interrupts and server errors surface as the same
     * {@link RedisException}s.
     */
    private <T> T run(String verb, String name, String script, ScriptOutputType type, String[] keys, String... args) {
        try {
            RedisClusterCommands<String, String> cmd = commands();
            RedisClusterAsyncCommands<String, String> a = async;
            long timeout = connection.getTimeout().toNanos();
            String sha = sha(script, cmd);
            try {
                return LettuceFutures.awaitOrCancel(a.<T>evalsha(sha, type, keys, args), timeout, TimeUnit.NANOSECONDS);
            } catch (RedisNoScriptException e) {
                return LettuceFutures.awaitOrCancel(a.<T>eval(script, type, keys, args), timeout, TimeUnit.NANOSECONDS);
            }
        } catch (RedisException e) {
            throw unavailable(verb + " lock '" + name + "'", e);
        }
    }

    /** The script's SHA-1, computed once (a plain get on the hot path: no capturing lambda per call). */
    private String sha(String script, RedisClusterCommands<String, String> cmd) {
        String sha = shas.get(script);
        if (sha == null) {
            sha = cmd.digest(script);
            shas.put(script, sha);
        }
        return sha;
    }

    private StoreUnavailableException unavailable(String what, RedisException e) {
        return RedisErrors.unavailable("cannot " + what + " on " + description, e, tls);
    }

    /**
     * The server's {@code run_id} (from {@code INFO server}): the same for every address of one
     * server process, different for every other.
     *
     * @throws StoreUnavailableException if the server cannot be asked
     */
    String serverRunId() {
        try {
            Matcher m = Pattern.compile("run_id:([0-9a-fA-F]+)").matcher(commands().info("server"));
            return m.find() ? m.group(1) : null;
        } catch (RedisException e) {
            throw unavailable("read the server's run_id", e);
        }
    }


    /** Opens the command connection now rather than on first use. */
    void connect() {
        try {
            commands();
        } catch (RedisException e) {
            throw unavailable("connect", e);
        }
    }

    @SuppressWarnings("unchecked")
    private RedisClusterCommands<String, String> commands() {
        checkOpen();
        RedisClusterCommands<String, String> c = redis;
        if (c == null) {
            synchronized (this) {
                // Again under the lock close() takes: a call that passed the first check while the
                // store was being closed must not open a connection that nothing would close.
                checkOpen();
                if (redis == null) {
                    // A server that accepts connections and never answers costs one connect
                    // timeout; the calls right after (the best-effort release of a failed acquire,
                    // other threads queued here) fail at once instead of paying it again.
                    RedisException failed = connectFailure;
                    if (failed != null && System.nanoTime() - connectFailedAt < CONNECT_RETRY_PAUSE_NANOS) {
                        // The failure is the cause: its chain (refused, WRONGPASS, an unknown host)
                        // is what names the fix, and this call must name it as the first one did.
                        throw new RedisConnectionException("not connected (the connect attempt "
                                + (System.nanoTime() - connectFailedAt) / 1_000_000 + " ms ago failed: " + failed.getMessage() + ")",
                                failed);
                    }
                    StatefulConnection<String, String> c0;
                    RedisClusterCommands<String, String> sync;
                    try {
                        c0 = connector.get();
                        sync = syncOf.apply(c0);
                        try {
                            if (replicaAcks.learnsAtConnect()) {
                                replicaAcks.learn(sync.info("replication"));
                            }
                        } catch (RedisException e) {
                            // Not connected until the replica count is known (a user without INFO
                            // permission): every call fails alike, naming the permission.
                            closeQuietly(c0);
                            throw e;
                        }
                    } catch (RedisException e) {
                        connectFailure = e;
                        connectFailedAt = System.nanoTime();
                        throw e;
                    }
                    connectFailure = null;
                    connection = c0;
                    async = cluster ? ((StatefulRedisClusterConnection<String, String>) c0).async()
                            : ((StatefulRedisConnection<String, String>) c0).async();
                    redis = sync;
                    // Only the default user is asked about: it is the one that is nopass on a server
                    // without a password, and it may run ACL there. A named user is never probed: one
                    // without ACL permission would leave a "command denied" entry in ACL LOG per connect.
                    if ("default".equals(passwordUser) && RedisErrors.acceptsAnyPassword(redis, passwordUser)) {
                        log.warn("{}: the URL gives a password, but the server's user '{}' has none (nopass), so any "
                                + "password is accepted: check that the URL names the server you meant, or set the "
                                + "password on the server (ACL SETUSER {} resetpass >…)", description, passwordUser,
                                passwordUser);
                    }
                }
                c = redis;
            }
        }
        return c;
    }


    /**
     * Best effort, and without waiting for the reply (this runs when a client closes, perhaps with
     * the server gone): a waiter that stopped waiting should not be named by the next release. If
     * this is lost, the next release names a waiter that is gone, and the others try 5 ms later.
     */
    private void leaveQueue(String name) {
        StatefulConnection<String, String> c = connection;
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
        private String description;
        private int replicaAcks = ReplicaAcks.AUTO;
        private Duration replicaAckTimeout = ReplicaAcks.DEFAULT_TIMEOUT;
        private String passwordUser;
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
