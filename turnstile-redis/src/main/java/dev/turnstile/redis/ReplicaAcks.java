package dev.turnstile.redis;

import dev.turnstile.StoreUnavailableException;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * How many replicas must acknowledge (with {@code WAIT}) a write of the Redis store before it
 * counts: a fixed count, or {@link #AUTO}, one replica if the master has any.
 *
 * <p>On Cluster the count comes from the client's topology, per key's master. On a standalone or
 * Sentinel master it comes from {@code INFO replication}, read at connect and again in the
 * background every few seconds. A master that has had a replica keeps needing one acknowledgement
 * even when it reports none connected: a master cut off from its replicas is the one whose grants a
 * failover loses, so it must stop granting rather than carry on alone. A new master (a new
 * replication ID: promoted, or restarted) is learned afresh.
 */
final class ReplicaAcks {
    /** One replica if the master has any, else none. */
    static final int AUTO = -1;
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(1);
    /** How often the replica count of a standalone master is read again (in the background). */
    private static final long RECHECK_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final Pattern CONNECTED_REPLICAS = Pattern.compile("connected_slaves:(\\d+)");
    private static final Pattern REPLICATION_ID = Pattern.compile("master_replid:(\\w+)");

    /** Replicas that must acknowledge a write: a count, or {@link #AUTO}. */
    private final int configured;
    private final Duration timeout;
    private final boolean cluster;
    /** The store's command connection, null before it connected. */
    private final Supplier<StatefulConnection<String, String>> connection;
    /** Connects the store (which reads the replica count: {@link #learnsAtConnect}), or throws its failure. */
    private final Runnable connect;
    /** Connected replicas of a standalone master, as INFO last said (-1: not known yet). */
    private volatile int knownReplicas = -1;
    /** The master's replication ID as INFO last said: a new one means a new master (a failover, a restart). */
    private volatile @Nullable String knownReplicationId;
    /** Whether the master of {@link #knownReplicationId} has had a replica: then it keeps needing one. */
    private volatile boolean hadReplicas;
    private volatile long checkedAt;
    /** Its own lock, not the store's: {@link #learn} runs on a Netty thread, which must never wait for a connect. */
    private final Object lock = new Object();

    ReplicaAcks(int configured, Duration timeout, boolean cluster, Supplier<StatefulConnection<String, String>> connection,
            Runnable connect) {
        this.configured = configured;
        this.timeout = timeout;
        this.cluster = cluster;
        this.connection = connection;
        this.connect = connect;
    }

    Duration timeout() {
        return timeout;
    }

    /** Whether a new connection must read {@code INFO replication} (and hand it to {@link #learn}) before it is used. */
    boolean learnsAtConnect() {
        return !cluster && configured == AUTO;
    }

    /**
     * How many replicas must acknowledge a write to this key now. A failed connect is thrown, not
     * taken for "no replicas": the write would only meet the cached failure, and the caller is told
     * this connect's own cause.
     */
    int required(String key) {
        if (configured != AUTO) {
            return configured;
        }
        if (cluster) {
            connect.run();
            return replicasOf(key) > 0 ? 1 : 0;
        }
        if (knownReplicas < 0) {
            connect.run(); // learns the count
        }
        if (System.nanoTime() - checkedAt > RECHECK_NANOS) {
            recheck();
        }
        return knownReplicas > 0 || hadReplicas ? 1 : 0;
    }

    /** Reads the replica count again in the background; the next writes use it. */
    @SuppressWarnings("unchecked")
    void recheck() {
        checkedAt = System.nanoTime();
        StatefulConnection<String, String> c = connection.get();
        if (c == null || cluster) {
            return;
        }
        ((StatefulRedisConnection<String, String>) c).async().info("replication").thenAccept(this::learn);
    }

    /** Takes in what {@code INFO replication} says. */
    void learn(@Nullable String info) {
        String text = info == null ? "" : info;
        Matcher m = CONNECTED_REPLICAS.matcher(text);
        int n = m.find() ? Integer.parseInt(m.group(1)) : 0;
        Matcher id = REPLICATION_ID.matcher(text);
        String replicationId = id.find() ? id.group(1) : null;
        synchronized (lock) {
            if (replicationId == null || !replicationId.equals(knownReplicationId)) {
                knownReplicationId = replicationId;
                hadReplicas = false;
            }
            hadReplicas |= n > 0;
            knownReplicas = n;
            checkedAt = System.nanoTime();
        }
    }

    /** The replicas the client's topology shows for the master of this key's slot, not marked failed. */
    @SuppressWarnings("unchecked")
    private int replicasOf(String key) {
        StatefulRedisClusterConnection<String, String> c = (StatefulRedisClusterConnection<String, String>) connection.get();
        RedisClusterNode master = c.getPartitions().getPartitionBySlot(SlotHash.getSlot(key));
        if (master == null) {
            return 0;
        }
        int n = 0;
        for (RedisClusterNode node : c.getPartitions()) {
            if (master.getNodeId().equals(node.getSlaveOf()) && !node.is(RedisClusterNode.NodeFlag.FAIL)
                    && !node.is(RedisClusterNode.NodeFlag.EVENTUAL_FAIL)) {
                n++;
            }
        }
        return n;
    }

    /** The client's connection to the master of this key's slot (Cluster): the one the key's commands went over. */
    @SuppressWarnings("unchecked")
    StatefulRedisConnection<String, String> masterConnection(String key) {
        StatefulRedisClusterConnection<String, String> c = (StatefulRedisClusterConnection<String, String>) connection.get();
        RedisClusterNode master = c.getPartitions().getPartitionBySlot(SlotHash.getSlot(key));
        return c.getConnection(master.getUri().getHost(), master.getUri().getPort());
    }

    /** The failure of a write that too few replicas acknowledged; reads the count again for the next writes. */
    StoreUnavailableException notAcknowledged(String what, String description, long acks, int required, String consequence) {
        recheck();
        return new StoreUnavailableException(what + " on " + description + ", but only " + acks + " of " + required
                + " replicas acknowledged it within " + timeout.toMillis() + " ms (" + consequence
                + "): check the replicas, or set turnstile.replicaAcks (0: do not wait)", null);
    }
}
