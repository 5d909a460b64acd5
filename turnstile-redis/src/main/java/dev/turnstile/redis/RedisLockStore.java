package dev.turnstile.redis;

import dev.turnstile.LockInfo;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.HandOver;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.ReleaseListener;
import dev.turnstile.spi.ReleaseResult;
import dev.turnstile.spi.ReleaseWatch;
import io.lettuce.core.KeyScanArgs;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
 * shares the lock's hash slot.
 *
 * <p>{@code lockAtLeastFor} is decided on the server's clock too: a release keeps the lock until
 * {@code acquired_at} (stamped by the server at the acquire and never rewritten) plus
 * {@code lockAtLeastFor}, compared with the server's {@code TIME}, so a client whose wall clock is
 * stepped neither frees the lock early nor keeps it taken for the size of the step, and
 * {@link #releaseReporting} says which of the two the script applied.
 *
 * <p>Acquire, extend and release are one {@code EVALSHA} each (a script that is recovered with
 * {@code EVAL} after a {@code NOSCRIPT}). Waiting clients queue in {@code <prefix>{<name>}:waiters}
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
public final class RedisLockStore implements LockStore {
    private static final Logger log = LoggerFactory.getLogger(RedisLockStore.class);

    /*
     * The scripts. A lock is one string, readable as it is:
     *   token=<token> fence=<n> acquired_at=<ms> expires_at=<ms> owner=<owner>
     * with a PX TTL. The token comes first so that it is compared exactly (a prefix match ending
     * at the space), whatever the owner text contains. Every redis.call, argument, reply element
     * and number turned into text inside a script costs server time, and on a busy server that
     * time is every client's: so the client writes the text before the fence and after the times
     * (token, owner), the script formats the fence and the times in one string.format (the times are
     * the server's TIME, which the acquire reads for the fence floor anyway: lockAtLeastFor is
     * counted from acquired_at, so no client clock may write it; expiry is the PX TTL, on the
     * server's clock), and the common paths keep to INCR and SET NX PX to acquire, GET, DEL and
     * PUBLISH to release. Lua prints numbers with 14 significant digits, so the fence (16 digits:
     * it follows the clock in µs) is formatted with %d. Redis 5 and later replicate a script's
     * effects, not the script, so reading TIME before a write is allowed (7.0 knows no other way).
     */

    /**
     * Bumps the counter KEYS[2] into {@code fence}, floored by the server's clock: the fence is
     * {@code max(counter + 1, TIME in µs rounded down to the millisecond)}, and the counter keeps it.
     *
     * <p>Why the floor is on every acquire, and why a millisecond floor is enough. Redis replicates
     * asynchronously, so a failover (Sentinel, Cluster, or a hand-made {@code REPLICAOF NO ONE}) can
     * lose the last writes: the promoted replica's counter is present but stale, and a bare
     * {@code INCR} would hand out a fence that was already issued. The floor prevents that,
     * under two conditions:
     *
     * <ol>
     *   <li><b>Fences do not run ahead of the clock.</b> Within one millisecond the counter moves by
     *       one per acquire from the millisecond's start; a script takes microseconds, so fewer than
     *       1000 acquires of one name fit in a millisecond, and every fence issued at server time
     *       {@code t} is at most {@code t} in µs. (A server clock stepped back lets the counter run
     *       ahead by the step; on that server the fences still increase, by the counter.)
     *   <li><b>A failover takes longer than the clocks disagree, plus 1 ms.</b> Writes lost in a
     *       failover were made before the replica was promoted: Sentinel promotes a replica only
     *       after {@code down-after-milliseconds} (30 s by default) and Cluster after
     *       {@code cluster-node-timeout} (15 s by default). The first fence the new master issues is
     *       at least its clock, to the millisecond below; every fence lost with the old master was
     *       at most the old master's clock when it was issued. So the new fence is greater whenever
     *       the two servers' clocks disagree by less than the failover took, less 1 ms: with NTP,
     *       milliseconds against seconds.
     * </ol>
     *
     * <p>What it does not cover: a forced or manual failover ({@code CLUSTER FAILOVER TAKEOVER},
     * {@code SENTINEL FAILOVER}) that promotes a replica within milliseconds of a lost write, and
     * servers whose clocks disagree by more than the failover takes. The replica acknowledgement
     * ({@code WAIT}) makes a lost acquire rarer still; see {@link Builder#replicaAcks(int)}.
     *
     * <p>Cost: {@code TIME} and a comparison on every acquire (about 0.6 µs of server time); the
     * counter is rewritten at most once per millisecond per name. A missing counter (a new name, a
     * restart without persistence, eviction) restarts at the clock to the microsecond, not to the
     * millisecond below: a fence issued earlier in the same millisecond, from the floor or the
     * counter, is at most its own issue time in µs, and a script takes more than a microsecond, so
     * the new fence is still greater.
     */
    private static final String NEXT_FENCE = """
            local fence = redis.call('INCR', KEYS[2])
            local t = redis.call('TIME')
            local floor = t[1] * 1000000 + t[2]
            if fence > 1 then floor = floor - t[2] % 1000 end
            if fence < floor then
              fence = floor
              redis.call('SET', KEYS[2], string.format('%d', fence))
            end
            """;

    /**
     * After {@link #NEXT_FENCE}: the fence and the server's clock in ms (from the same TIME), and
     * the text between them in a lock's value, for a lease of ttl ms ({@code ARGV[ttl]}) that
     * starts now.
     */
    private static String fenceAndTimes(int ttlArg) {
        return "string.format('%d acquired_at=%d expires_at=%d', fence, t[1] * 1000 + math.floor(t[2] / 1000), "
                + "t[1] * 1000 + math.floor(t[2] / 1000) + ARGV[" + ttlArg + "])";
    }

    /**
     * KEYS: lock, fence counter, and the waiter queue if a waiter id is given. ARGV: the value's
     * head up to the fence ({@code token=<token> fence=}), its tail after the times
     * ({@code  owner=<owner>}), ttl ms, the waiter id of a caller that will wait (absent if it will
     * not). The script writes the fence, {@code acquired_at} and {@code expires_at} in between,
     * from the server's TIME. Returns the fence, or 0 if busy (a busy attempt still bumps the
     * counter: fences may skip numbers, never repeat). A busy waiter joins the queue (keeping its
     * place if it is in it already); a waiter that gets the lock leaves it.
     */
    static final String ACQUIRE = """
            local waiter = ARGV[4]
            """ + NEXT_FENCE + """
            if not redis.call('SET', KEYS[1], ARGV[1] .. """ + fenceAndTimes(3) + """
             .. ARGV[2], 'NX', 'PX', ARGV[3]) then
              if waiter then
                local t = redis.call('TIME')
                redis.call('ZADD', KEYS[3], 'NX', t[1] * 1000000 + t[2], waiter)
                redis.call('PEXPIRE', KEYS[3], 60000)
              end
              return 0
            end
            if waiter then redis.call('ZREM', KEYS[3], waiter) end
            return fence
            """;

    /** Returns 0 unless KEYS[1] is held by the token ARGV[1]; leaves the value in v, its prefix in mine. */
    private static final String HELD_BY_TOKEN = """
            local v = redis.call('GET', KEYS[1])
            local mine = 'token=' .. ARGV[1] .. ' '
            if not v or string.sub(v, 1, #mine) ~= mine then return 0 end
            """;

    /**
     * KEYS: lock. ARGV: token, ttl ms. Returns 1 if extended. The new expires_at, for people, is the
     * server's TIME plus the ttl; acquired_at stays as the acquire wrote it.
     */
    static final String EXTEND = HELD_BY_TOKEN + """
            local t = redis.call('TIME')
            local until_ms = string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000) + ARGV[2])
            local rest = string.gsub(string.sub(v, #mine + 1), '^(fence=%d+ acquired_at=%d+ expires_at=)%d+', '%1' .. until_ms)
            redis.call('SET', KEYS[1], mine .. rest, 'PX', ARGV[2])
            return 1
            """;

    /*
     * A release wakes the waiters with a message "<token> <waiter id>" on <lock>:released, naming
     * the longest-queued waiter (taken off the queue), or "<token>" when none is queued. The named
     * one tries at once; the others a moment later, in case it is gone. So one process, not all of
     * them, races for the lock, and the lock goes round the waiting processes in turn. The message
     * goes out even when nobody is queued: a client that has just released and wants the lock
     * again is not queued while it lets the others go first, and listens for their release.
     */
    private static final String WAKE_NEXT = """
            if redis.call('EXISTS', KEYS[2]) == 1 then
              local next = redis.call('ZPOPMIN', KEYS[2])[1]
              if next then
                redis.call('PUBLISH', KEYS[1] .. ':released', ARGV[1] .. ' ' .. next)
                return 1
              end
            end
            redis.call('PUBLISH', KEYS[1] .. ':released', ARGV[1])
            return 1
            """;

    /**
     * KEYS: lock, waiter queue. ARGV: token. Deletes the lock (the fence lives on in its own key)
     * and wakes the next waiter. Returns 1 if the token held it.
     */
    static final String RELEASE = HELD_BY_TOKEN + """
            redis.call('DEL', KEYS[1])
            """ + WAKE_NEXT;

    /**
     * KEYS: lock, waiter queue. ARGV: token, lockAtLeastFor ms. Keeps the lock until lockAtLeastFor
     * after it was taken, or releases it as {@link #RELEASE} does if that is past. Both ends are
     * the server's clock: acquired_at as the acquire's TIME wrote it (an extend never rewrites it),
     * and now from TIME here; no client clock takes part, whatever it did since the acquire.
     * Returns {@link #KEPT} if kept, 1 if released, 0 if the token did not hold it.
     */
    static final String RELEASE_AT_LEAST = HELD_BY_TOKEN + """
            local rest = string.sub(v, #mine + 1)
            local until_ms = string.match(rest, '^fence=%d+ acquired_at=(%d+)') + ARGV[2]
            local t = redis.call('TIME')
            local keep = until_ms - (t[1] * 1000 + math.floor(t[2] / 1000))
            if keep > 0 then
              rest = string.gsub(rest, '^(fence=%d+ acquired_at=%d+ expires_at=)%d+', '%1' .. string.format('%d', until_ms))
              redis.call('SET', KEYS[1], mine .. rest, 'PX', string.format('%d', keep))
              return 2
            end
            redis.call('DEL', KEYS[1])
            """ + WAKE_NEXT;

    /** What {@link #RELEASE_AT_LEAST} returns when it kept the lock for lockAtLeastFor. */
    static final long KEPT = 2L;

    /**
     * KEYS: lock, fence counter, waiter queue. ARGV: token, the next holder's value head and tail
     * (as for {@link #ACQUIRE}), its ttl ms, this client's waiter id. Ends the lease of the token
     * and gives the lock to the next holder, a waiter of the same client, with the next fence,
     * unless another client is first in the queue: then it releases as {@link #RELEASE} does.
     * Returns the next holder's fence, -1 if only released, 0 if the token did not hold the lock.
     */
    static final String HAND_OVER = HELD_BY_TOKEN + """
            local first = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
            if first and first ~= ARGV[5] then
              redis.call('DEL', KEYS[1])
              redis.call('ZREM', KEYS[3], first)
              redis.call('PUBLISH', KEYS[1] .. ':released', ARGV[1] .. ' ' .. first)
              return -1
            end
            if first then redis.call('ZREM', KEYS[3], first) end
            """ + NEXT_FENCE + """
            redis.call('SET', KEYS[1], ARGV[2] .. """ + fenceAndTimes(4) + """
             .. ARGV[3], 'PX', ARGV[4])
            return fence
            """;

    /** KEYS: lock, waiter queue. ARGV: '' (no token). Returns 1 if a lease was ended. */
    static final String FORCE_RELEASE = """
            if redis.call('DEL', KEYS[1]) == 0 then return 0 end
            """ + WAKE_NEXT;

    /** How long the waiters not named by a release wait before they try too. */
    private static final long UNNAMED_WAKE_DELAY_MILLIS = 5;

    private static final String DEFAULT_PREFIX = "turnstile:";
    /** {@link #replicaAcks}: one replica if the master has any, else none. */
    private static final int AUTO_ACKS = -1;
    private static final Duration DEFAULT_ACK_TIMEOUT = Duration.ofSeconds(1);
    /** How often the replica count of a standalone master is read again (in the background). */
    private static final long REPLICA_RECHECK_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** After a failed connect, calls fail at once for this long instead of each paying a connect timeout. */
    private static final long CONNECT_RETRY_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final Pattern VALUE =
            Pattern.compile("token=.*? fence=(\\d+) acquired_at=(\\d+) expires_at=(\\d+) owner=(.*)", Pattern.DOTALL);

    private final Supplier<StatefulConnection<String, String>> connector;
    private final Function<StatefulConnection<String, String>, RedisClusterCommands<String, String>> syncOf;
    private final boolean cluster;
    /** Replicas that must acknowledge a write: a count, or {@link #AUTO_ACKS}. */
    private final int replicaAcks;
    private final Duration replicaAckTimeout;
    /** The user whose password the URL gave (checked once connected), or null if none was given. */
    private final String passwordUser;
    /** Whether the URL asked for TLS ({@code rediss://}), for {@link #cause}. */
    private final boolean tls;
    /** Connected replicas of a standalone master, as INFO last said (-1: not known yet). */
    private volatile int knownReplicas = -1;
    /** The master's replication ID as INFO last said: a new one means a new master (a failover, a restart). */
    private volatile String knownReplicationId;
    /** Whether the master of {@link #knownReplicationId} has had a replica: then it keeps needing one. */
    private volatile boolean hadReplicas;
    private volatile long replicasCheckedAt;
    /** When the last connect failed, and why: calls fail fast for a moment after (see {@link #commands()}). */
    private volatile long connectFailedAt;
    private volatile RedisException connectFailure;
    private final Supplier<StatefulRedisPubSubConnection<String, String>> pubSubConnector;
    private final String prefix;
    private final String description;
    private final List<AutoCloseable> owned;
    private final Map<String, String> shas = new ConcurrentHashMap<>();
    private final Map<String, Watchers> listeners = new ConcurrentHashMap<>();
    /** Names this store in waiter queues: one per store, shared by its waiters. */
    private final String waiterId = Long.toHexString(new SecureRandom().nextLong() | Long.MIN_VALUE);

    /** The listeners on one channel, and how many messages it has had (to drop stale delayed wake-ups). */
    private static final class Watchers {
        final List<ReleaseListener> list = new CopyOnWriteArrayList<>();
        final AtomicLong messages = new AtomicLong();

        void tell(String token) {
            list.forEach(x -> x.released(token));
        }
    }

    private volatile boolean closed;
    private volatile StatefulConnection<String, String> connection;
    private volatile RedisClusterCommands<String, String> redis;
    /** The async API of {@link #connection}; set before {@link #redis}, so a caller that saw redis sees it. */
    private volatile RedisClusterAsyncCommands<String, String> async;
    private volatile StatefulRedisPubSubConnection<String, String> pubSub;

    private RedisLockStore(Builder b) {
        this.connector = b.connector;
        this.syncOf = b.syncOf;
        this.cluster = b.cluster;
        this.replicaAcks = b.replicaAcks;
        this.replicaAckTimeout = b.replicaAckTimeout;
        this.passwordUser = b.passwordUser;
        this.tls = b.tls;
        this.pubSubConnector = b.pubSubConnector;
        this.prefix = b.prefix;
        this.description = b.description + " (prefix " + b.prefix + ")";
        this.owned = b.owned;
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

    /** Yes: the waiter queue tells whether another client has waited longer. */
    @Override
    public boolean handsOver() {
        return true;
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
        String channel = channel(name);
        try {
            StatefulRedisPubSubConnection<String, String> ps = pubSub();
            boolean[] first = {false};
            listeners.compute(channel, (k, w) -> {
                Watchers x = w != null ? w : new Watchers();
                first[0] = x.list.isEmpty();
                x.list.add(listener);
                return x;
            });
            if (first[0]) {
                ps.sync().subscribe(channel);
            }
        } catch (RedisException e) {
            // Waiting still works by polling (the waiter keeps its place in the queue); only the prompt
            // wake-up is lost. The listener goes, or the next watch on this channel would take the
            // failed subscription for a live one.
            listeners.computeIfPresent(channel, (k, w) -> {
                w.list.remove(listener);
                return w.list.isEmpty() ? null : w;
            });
            log.warn("cannot subscribe to releases of '{}' on {}: {}", name, description, e.toString());
            return ReleaseWatch.NONE;
        }
        return () -> {
            boolean[] last = {false};
            listeners.computeIfPresent(channel, (k, w) -> {
                w.list.remove(listener);
                last[0] = w.list.isEmpty();
                return w.list.isEmpty() ? null : w;
            });
            StatefulRedisPubSubConnection<String, String> ps = pubSub;
            if (last[0] && ps != null && ps.isOpen()) {
                ps.async().unsubscribe(channel);
                leaveQueue(name);
            }
        };
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
        closeConnection(pubSub);
        closeConnection(connection);
        owned.forEach(RedisLockStore::closeQuietly);
    }

    /**
     * Closes one of the store's connections unless it is closed already: a client shut down before
     * the store (Spring Data Redis stops its connection factory, and with it the client, before the
     * store bean is destroyed) has closed it, and closing it again has Lettuce log "Connection is
     * already closed" at WARN on every shutdown.
     */
    private static void closeConnection(StatefulConnection<?, ?> c) {
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
            required = requiredAcks(keys[0]);
        } catch (RedisException e) {
            throw unavailable(verb + " lock '" + name + "'", e);
        }
        if (required == 0) {
            Long result = run(verb, name, script, ScriptOutputType.INTEGER, keys, args);
            return new Acked(result, 0, 0);
        }
        try {
            long ackMillis = replicaAckTimeout.toMillis();
            if (cluster) {
                Long result = run(verb, name, script, ScriptOutputType.INTEGER, keys, args);
                StatefulRedisConnection<String, String> node = masterConnection(keys[0]);
                return new Acked(result, node.sync().waitForReplication(required, ackMillis), required);
            }
            RedisClusterCommands<String, String> cmd = commands();
            @SuppressWarnings("unchecked")
            RedisClusterAsyncCommands<String, String> async = ((StatefulRedisConnection<String, String>) connection).async();
            long limit = connection.getTimeout().toNanos() + replicaAckTimeout.toNanos();
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

    /** How many replicas must acknowledge a write to this key now. */
    private int requiredAcks(String key) {
        if (replicaAcks != AUTO_ACKS) {
            return replicaAcks;
        }
        // A failed connect is thrown, not taken for "no replicas": the write would only meet the
        // cached failure, and the caller is told this connect's own cause.
        if (cluster) {
            commands();
            return replicasOf(key) > 0 ? 1 : 0;
        }
        if (knownReplicas < 0) {
            commands(); // learns the count
        }
        if (System.nanoTime() - replicasCheckedAt > REPLICA_RECHECK_NANOS) {
            recheckReplicas();
        }
        return knownReplicas > 0 || hadReplicas ? 1 : 0;
    }

    /** Reads the replica count again in the background; the next writes use it. */
    @SuppressWarnings("unchecked")
    private void recheckReplicas() {
        replicasCheckedAt = System.nanoTime();
        StatefulConnection<String, String> c = connection;
        if (c == null || cluster) {
            return;
        }
        ((StatefulRedisConnection<String, String>) c).async().info("replication").thenAccept(this::learnReplicas);
    }

    private static final Pattern CONNECTED_REPLICAS = Pattern.compile("connected_slaves:(\\d+)");
    private static final Pattern REPLICATION_ID = Pattern.compile("master_replid:(\\w+)");

    /**
     * Takes in what {@code INFO replication} says. A master that has had a replica keeps needing
     * one acknowledgement even when it reports none connected: a master cut off from its replicas is
     * the one whose grants a failover loses, so it must stop granting rather than carry on alone. A
     * new master (a new replication ID: promoted, or restarted) is learned afresh.
     */
    private void learnReplicas(String info) {
        String text = info == null ? "" : info;
        Matcher m = CONNECTED_REPLICAS.matcher(text);
        int n = m.find() ? Integer.parseInt(m.group(1)) : 0;
        Matcher id = REPLICATION_ID.matcher(text);
        String replicationId = id.find() ? id.group(1) : null;
        // Its own lock, not the store's: this runs on a Netty thread, which must never wait for a
        // connect that holds the store's lock (and may need that very thread).
        synchronized (replicaLock) {
            if (replicationId == null || !replicationId.equals(knownReplicationId)) {
                knownReplicationId = replicationId;
                hadReplicas = false;
            }
            hadReplicas |= n > 0;
            knownReplicas = n;
            replicasCheckedAt = System.nanoTime();
        }
    }

    private final Object replicaLock = new Object();

    /** The replicas the client's topology shows for the master of this key's slot, not marked failed. */
    private int replicasOf(String key) {
        RedisClusterNode master = ((StatefulRedisClusterConnection<String, String>) connection).getPartitions()
                .getPartitionBySlot(SlotHash.getSlot(key));
        if (master == null) {
            return 0;
        }
        int n = 0;
        for (RedisClusterNode node : ((StatefulRedisClusterConnection<String, String>) connection).getPartitions()) {
            if (master.getNodeId().equals(node.getSlaveOf()) && !node.is(RedisClusterNode.NodeFlag.FAIL)
                    && !node.is(RedisClusterNode.NodeFlag.EVENTUAL_FAIL)) {
                n++;
            }
        }
        return n;
    }

    /** The client's connection to the master of this key's slot: the one the key's commands went over. */
    private StatefulRedisConnection<String, String> masterConnection(String key) {
        StatefulRedisClusterConnection<String, String> c = (StatefulRedisClusterConnection<String, String>) connection;
        RedisClusterNode master = c.getPartitions().getPartitionBySlot(SlotHash.getSlot(key));
        return c.getConnection(master.getUri().getHost(), master.getUri().getPort());
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
        recheckReplicas();
        return new StoreUnavailableException(what + " on " + description + ", but only " + a.acks() + " of " + a.required()
                + " replicas acknowledged it within " + replicaAckTimeout.toMillis() + " ms (" + consequence
                + "): check the replicas, or set turnstile.replicaAcks (0: do not wait)", null);
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
        // Every message down the chain that adds something: the driver's "Unable to connect"
        // wraps the server's or the OS's words ("WRONGPASS …", "Connection refused"), and the
        // fast-fail of a recent failed connect wraps that in turn.
        String detail = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        for (Throwable t : chain(e)) {
            if (t != e && t.getMessage() != null && !detail.contains(t.getMessage())) {
                detail += ": " + t.getMessage();
            }
        }
        String cause = cause(e, tls);
        return new StoreUnavailableException("cannot " + what + " on " + description + ": " + (cause != null ? cause + " ("
                + detail + ")" : detail), e);
    }

    /** The exception, its causes and what they suppressed (Lettuce keeps each Sentinel's failure there), in that order. */
    static List<Throwable> chain(Throwable e) {
        List<Throwable> out = new ArrayList<>();
        java.util.ArrayDeque<Throwable> todo = new java.util.ArrayDeque<>();
        todo.add(e);
        while (!todo.isEmpty() && out.size() < 32) {
            Throwable t = todo.poll();
            if (out.stream().anyMatch(x -> x == t)) {
                continue;
            }
            out.add(t);
            if (t.getCause() != null) {
                todo.add(t.getCause());
            }
            todo.addAll(List.of(t.getSuppressed()));
        }
        return out;
    }

    /**
     * What the user should fix, for the driver's failures that all begin "Unable to connect": the
     * cause first, in words, with the driver's text after it. Read from the exceptions' types and
     * from the server's own error text, never from a message that quotes the host or the URL (a
     * host named {@code noauth-cache} is not a failed login).
     */
    static String cause(Throwable e) {
        return cause(e, false);
    }

    /** As {@link #cause(Throwable)}, for a connection that asked for TLS or not. */
    static String cause(Throwable e, boolean tls) {
        List<Throwable> chain = chain(e);
        for (Throwable t : chain) {
            if (t instanceof RedisCommandExecutionException) {
                // The server's reply: "<CODE> text", with no host in it.
                String reply = String.valueOf(t.getMessage()).toUpperCase(java.util.Locale.ROOT);
                if (reply.startsWith("ERR DB INDEX IS OUT OF RANGE")) {
                    return "that database number does not exist on the server (it has 16 by default: /0 to /15 in the URL)";
                }
                if (reply.startsWith("WRONGPASS") || reply.startsWith("NOAUTH") || reply.startsWith("ERR INVALID PASSWORD")
                        || reply.startsWith("ERR INVALID USERNAME")) {
                    return "authentication failed: check the user and password in the URL";
                }
                if (reply.startsWith("NOPERM") && reply.contains("'INFO'")) {
                    return "the Redis user may not run INFO, which turnstile.replicaAcks=auto (the default) uses to count the "
                            + "master's replicas: grant it (ACL SETUSER <user> +info), or set turnstile.replicaAcks to a count "
                            + "(0: do not wait for replicas)";
                }
            }
        }
        // Lettuce's wrapper of a failed Sentinel connect; its text names the Sentinel after this start.
        boolean sentinel = chain.stream().anyMatch(t -> t instanceof RedisConnectionException
                && String.valueOf(t.getMessage()).startsWith("Cannot connect Redis Sentinel"));
        if (has(chain, java.net.UnknownHostException.class)) {
            return "unknown host: check the host name";
        }
        if (has(chain, io.netty.channel.ConnectTimeoutException.class)) { // a ConnectException: ask first
            return "no answer to the connection attempt within turnstile.connectTimeout: a firewall drops it, or the host "
                    + "is down (check the host and port)";
        }
        if (has(chain, java.net.ConnectException.class)) {
            return sentinel ? "connection refused: is a Sentinel running at that host and port (26379 by default)?"
                    : "connection refused: is Redis running at that host and port?";
        }
        if (tls) {
            // A plain Redis answers a TLS hello with an error, or not at all; either way the
            // handshake stalls until the timeout or ends in a TLS error.
            if (has(chain, javax.net.ssl.SSLException.class) && !has(chain, io.netty.handler.ssl.SslHandshakeTimeoutException.class)
                    && !has(chain, io.netty.handler.ssl.NotSslRecordException.class)) {
                return "the TLS handshake failed: check that this JVM trusts the server's certificate and that it names the "
                        + "host in the URL";
            }
            if (has(chain, javax.net.ssl.SSLException.class) || has(chain, io.netty.handler.ssl.NotSslRecordException.class)
                    || has(chain, RedisCommandTimeoutException.class)) {
                return "no TLS handshake within turnstile.connectTimeout: is the server a plain Redis without TLS? Then use "
                        + "redis://, not rediss://";
            }
        }
        for (Throwable t : chain) {
            String m = String.valueOf(t.getMessage());
            if (t instanceof io.lettuce.core.protocol.RedisProtocolException) {
                return "the server answered something other than Redis: not a Redis server (wrong port?)";
            }
            // Lettuce's own texts, which quote no host.
            if (t instanceof RedisCommandTimeoutException && m.startsWith("Cannot obtain master using SENTINEL MASTER")) {
                return "no Sentinel answered SENTINEL MASTER: is that address a Sentinel (port 26379 by default) rather than a "
                        + "Redis server, and is the master name after '#' right?";
            }
            if ((t instanceof RedisConnectionException && m.equals("Connection closed prematurely"))
                    || (t instanceof java.io.IOException && m.startsWith("Connection reset"))) {
                return "the server closed the connection without a Redis answer: not a Redis server (wrong port?)";
            }
            if (t instanceof RedisCommandTimeoutException && m.startsWith("Connection initialization timed out") && sentinel) {
                return "the Sentinel accepted the connection but did not answer within turnstile.connectTimeout: is that "
                        + "address a Sentinel (port 26379 by default), and not overloaded?";
            }
            if (t instanceof RedisCommandTimeoutException && m.startsWith("Connection initialization timed out")) {
                return "the server accepted the connection but did not answer within turnstile.connectTimeout: not a Redis server, "
                        + "or overloaded";
            }
        }
        return null;
    }

    private static boolean has(List<Throwable> chain, Class<? extends Throwable> type) {
        return chain.stream().anyMatch(type::isInstance);
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

    /**
     * Whether the server lets {@code user} in with any password: Redis 6 and later accept AUTH
     * with any password for a user marked {@code nopass} (the default user of a server without a
     * password), so a password in the URL proves nothing there. Asked with {@code ACL GETUSER},
     * which changes nothing and logs no failed login; a server that refuses the question (no ACL
     * permission, Redis before 6) is taken to check passwords. The store asks only about the
     * {@code default} user: a refused question is itself an ACL LOG entry.
     */
    static boolean acceptsAnyPassword(RedisClusterCommands<String, String> redis, String user) {
        List<Object> reply;
        try {
            reply = redis.aclGetuser(user);
        } catch (RedisException e) {
            log.debug("cannot ask whether user '{}' has a password: {}", user, e.toString());
            return false;
        }
        if (reply == null) {
            return false;
        }
        for (int i = 0; i + 1 < reply.size(); i += 2) {
            if ("flags".equals(String.valueOf(reply.get(i))) && reply.get(i + 1) instanceof List<?> flags) {
                return flags.stream().anyMatch(f -> "nopass".equals(String.valueOf(f)));
            }
        }
        return false;
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
                            if (!cluster && replicaAcks == AUTO_ACKS) {
                                learnReplicas(sync.info("replication"));
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
                    if ("default".equals(passwordUser) && acceptsAnyPassword(redis, passwordUser)) {
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
     * A release message, "<token> <waiter id>" or "<token>" (the token is empty for a forced
     * release): the named waiter, or everyone if none is named, is told at once; the others after
     * {@link #UNNAMED_WAKE_DELAY_MILLIS}, unless another release came in between (the lock is
     * moving, and they will be named in turn).
     */
    private void released(Watchers w, String message) {
        long n = w.messages.incrementAndGet();
        int space = message.lastIndexOf(' ');
        String token = space < 0 ? message : message.substring(0, space);
        String named = space < 0 ? null : message.substring(space + 1);
        String released = token.isEmpty() ? null : token;
        // A forced release (no token) is told to everyone at once: a holder must learn of it even if
        // a waiter takes the lock and releases it within the delay (which would cancel the telling).
        if (named == null || named.equals(waiterId) || released == null) {
            w.tell(released);
        } else {
            // Run on the JDK's delay thread itself: telling is quick, and on 2 cores the async pool
            // would start a thread per task.
            CompletableFuture.delayedExecutor(UNNAMED_WAKE_DELAY_MILLIS, TimeUnit.MILLISECONDS, Runnable::run).execute(() -> {
                if (w.messages.get() == n) {
                    w.tell(released);
                }
            });
        }
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

    private StatefulRedisPubSubConnection<String, String> pubSub() {
        checkOpen();
        StatefulRedisPubSubConnection<String, String> p = pubSub;
        if (p == null) {
            synchronized (this) {
                if (pubSub == null) {
                    StatefulRedisPubSubConnection<String, String> ps = pubSubConnector.get();
                    ps.addListener(new RedisPubSubAdapter<>() {
                        @Override
                        public void message(String channel, String message) {
                            Watchers w = listeners.get(channel);
                            if (w != null) {
                                released(w, message == null ? "" : message);
                            }
                        }
                    });
                    pubSub = ps;
                }
                p = pubSub;
            }
        }
        return p;
    }

    /** Builds a {@link RedisLockStore}. Not thread-safe. */
    public static final class Builder {
        private final Supplier<StatefulConnection<String, String>> connector;
        private final Function<StatefulConnection<String, String>, RedisClusterCommands<String, String>> syncOf;
        private final Supplier<StatefulRedisPubSubConnection<String, String>> pubSubConnector;
        private final boolean cluster;
        private String prefix = DEFAULT_PREFIX;
        private String description;
        private int replicaAcks = AUTO_ACKS;
        private Duration replicaAckTimeout = DEFAULT_ACK_TIMEOUT;
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
