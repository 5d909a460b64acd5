package dev.turnstile.redis;

import dev.turnstile.StoreUnavailableException;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Redis store's command connection, opened on first use, and the scripts run on it: each one
 * {@code EVALSHA}, recovered with {@code EVAL} after a {@code NOSCRIPT}, and, where replicas must
 * acknowledge a write ({@link ReplicaAcks}), followed by a {@code WAIT} on the same connection.
 * After a failed connect, calls fail at once for {@link #CONNECT_RETRY_PAUSE_NANOS} instead of each
 * paying a connect timeout. Every failure surfaces as a {@link StoreUnavailableException} that
 * names the store and the fix ({@link RedisErrors}).
 */
final class ScriptRunner {
    private static final Logger log = LoggerFactory.getLogger(ScriptRunner.class);
    /** After a failed connect, calls fail at once for this long instead of each paying a connect timeout. */
    private static final long CONNECT_RETRY_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Supplier<StatefulConnection<String, String>> connector;
    private final Function<StatefulConnection<String, String>, RedisClusterCommands<String, String>> syncOf;
    private final boolean cluster;
    /** How many replicas must acknowledge a write. */
    private final ReplicaAcks replicaAcks;
    /** The user whose password the URL gave (checked once connected), or null if none was given. */
    private final @Nullable String passwordUser;
    /** Whether the URL asked for TLS ({@code rediss://}), for the failure messages ({@link RedisErrors}). */
    private final boolean tls;
    private final String description;
    /** Throws if the store is closed; called again under this runner's lock, which {@link #close} takes. */
    private final Runnable checkOpen;
    private final Map<String, String> shas = new ConcurrentHashMap<>();
    /** When the last connect failed, and why: calls fail fast for a moment after (see {@link #commands()}). */
    private volatile long connectFailedAt;
    private volatile @Nullable RedisException connectFailure;
    /** The command connection once opened, with its two APIs: published together, so a caller sees all three. */
    private volatile @Nullable Open open;

    private record Open(StatefulConnection<String, String> connection, RedisClusterCommands<String, String> sync,
            RedisClusterAsyncCommands<String, String> async) {}

    ScriptRunner(Supplier<StatefulConnection<String, String>> connector,
            Function<StatefulConnection<String, String>, RedisClusterCommands<String, String>> syncOf, boolean cluster,
            int replicaAcks, java.time.Duration replicaAckTimeout, @Nullable String passwordUser, boolean tls, String description,
            Runnable checkOpen) {
        this.connector = connector;
        this.syncOf = syncOf;
        this.cluster = cluster;
        this.replicaAcks = new ReplicaAcks(replicaAcks, replicaAckTimeout, cluster, this::connectionIfOpen, this::commands);
        this.passwordUser = passwordUser;
        this.tls = tls;
        this.description = description;
        this.checkOpen = checkOpen;
    }

    /**
     * A write's integer reply, and how many replicas acknowledged it out of how many were wanted.
     *
     * @param result the script's reply
     * @param acks replicas that acknowledged it ({@code WAIT}'s reply; 0 when not asked)
     * @param required replicas wanted (0: none asked)
     */
    record Acked(long result, long acks, int required) {
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
    Acked runAcked(String verb, String name, String script, String[] keys, String... args) {
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
            Open o = opened();
            RedisClusterAsyncCommands<String, String> async = o.async();
            long limit = o.connection().getTimeout().toNanos() + replicaAcks.timeout().toNanos();
            String sha = sha(script, o.sync());
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

    /** The failure for a write the replicas did not acknowledge (see {@link ReplicaAcks#notAcknowledged}). */
    StoreUnavailableException notAcknowledged(String what, Acked a, String consequence) {
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
    @SuppressWarnings("TypeParameterUnusedInFormals") // the reply's type follows the ScriptOutputType given
    <T> T run(String verb, String name, String script, ScriptOutputType type, String[] keys, String... args) {
        try {
            Open o = opened();
            RedisClusterAsyncCommands<String, String> a = o.async();
            long timeout = o.connection().getTimeout().toNanos();
            String sha = sha(script, o.sync());
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

    /** The failure to report for {@code e}, naming what was being done and on which store. */
    StoreUnavailableException unavailable(String what, RedisException e) {
        return RedisErrors.unavailable("cannot " + what + " on " + description, e, tls);
    }

    /**
     * The server's {@code run_id} (from {@code INFO server}): the same for every address of one
     * server process, different for every other.
     *
     * @throws StoreUnavailableException if the server cannot be asked
     */
    @Nullable String serverRunId() {
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

    /** The command connection once opened, else null (for best-effort work that must not connect). */
    @Nullable StatefulConnection<String, String> connectionIfOpen() {
        Open o = open;
        return o == null ? null : o.connection();
    }

    /** The sync API of the command connection, which it opens if needed. */
    RedisClusterCommands<String, String> commands() {
        return opened().sync();
    }

    /** The command connection and its APIs, opened if needed. */
    @SuppressWarnings("unchecked")
    private Open opened() {
        checkOpen.run();
        Open c = open;
        if (c == null) {
            synchronized (this) {
                // Again under the lock close() takes: a call that passed the first check while the
                // store was being closed must not open a connection that nothing would close.
                checkOpen.run();
                c = open;
                if (c == null) {
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
                    c = new Open(c0, sync, cluster ? ((StatefulRedisClusterConnection<String, String>) c0).async()
                            : ((StatefulRedisConnection<String, String>) c0).async());
                    open = c;
                    // Only the default user is asked about: it is the one that is nopass on a server
                    // without a password, and it may run ACL there. A named user is never probed: one
                    // without ACL permission would leave a "command denied" entry in ACL LOG per connect.
                    if ("default".equals(passwordUser) && RedisErrors.acceptsAnyPassword(sync, "default")) {
                        log.warn("{}: the URL gives a password, but the server's user '{}' has none (nopass), so any "
                                + "password is accepted: check that the URL names the server you meant, or set the "
                                + "password on the server (ACL SETUSER {} resetpass >…)", description, passwordUser,
                                passwordUser);
                    }
                }
            }
        }
        return c;
    }

    /** Closes the command connection, if one was opened; called once the store counts as closed. */
    synchronized void close() {
        closeConnection(connectionIfOpen());
    }

    /**
     * Closes one of the store's connections unless it is closed already: a client shut down before
     * the store (Spring Data Redis stops its connection factory, and with it the client, before the
     * store bean is destroyed) has closed it, and closing it again has Lettuce log "Connection is
     * already closed" at WARN on every shutdown.
     */
    static void closeConnection(@Nullable StatefulConnection<?, ?> c) {
        if (c instanceof RedisChannelHandler<?, ?> handler && handler.isClosed()) {
            return;
        }
        closeQuietly(c);
    }

    static void closeQuietly(@Nullable AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                log.debug("close failed", e);
            }
        }
    }
}
