package dev.turnstile.chaos;

import dev.turnstile.spi.LockStores;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A store as one scenario runs it: its endpoints, its URLs and its own server processes. */
public final class StoreInstance implements AutoCloseable {
    /** The PostgreSQL endpoint. */
    public static final String POSTGRES = System.getProperty("turnstile.chaos.postgres", "127.0.0.1:5432");
    /** The MariaDB endpoint. */
    public static final String MARIADB = System.getProperty("turnstile.chaos.mariadb", "127.0.0.1:3306");
    /** The lock table the SQL stores use, apart from the other tests' tables. */
    public static final String TABLE = "chaos_locks";
    /**
     * ZooKeeper workers' session timeout: short, so that a silent holder's session (and its node)
     * goes fast, yet above the short run's 2 s TTL's keep-alive interval and several of the
     * servers' 100 ms ticks. The client pings every third of it and calls itself disconnected
     * (SUSPENDED) after two thirds of it without an answer.
     */
    public static final java.time.Duration ZK_SESSION_TIMEOUT = java.time.Duration.ofSeconds(1);

    private final StoreSpec spec;
    private final Path dir;
    private final List<RedisServer> redis = new ArrayList<>();
    private RedisSentinel sentinel;
    private MongoProcess mongo;
    private ZooKeeperProcess zookeeper;
    /** Sentinel: which of {@link #redis} is the master now (the other is its replica). */
    private int masterIndex;
    private final List<String> endpoints = new ArrayList<>();

    StoreInstance(StoreSpec spec, Path dir) {
        this.spec = spec;
        this.dir = dir;
        try {
            switch (spec.kind()) {
                case SQLITE -> { }
                case POSTGRESQL -> endpoints.add(POSTGRES);
                case MARIADB -> endpoints.add(MARIADB);
                case REDIS -> redis.add(new RedisServer(dir));
                case REDLOCK -> {
                    for (int i = 0; i < 3; i++) {
                        redis.add(new RedisServer(dir));
                    }
                }
                case REDIS_SENTINEL -> startSentinel();
                case MONGO -> mongo = new MongoProcess(dir);
                case ZOOKEEPER -> zookeeper = ZooKeeperProcess.standalone(dir);
                case ZOOKEEPER_ENSEMBLE -> zookeeper = ZooKeeperProcess.ensemble(dir);
                default -> throw new IllegalStateException(spec.kind().toString());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        if (sentinel != null) {
            endpoints.add(sentinel.hostPort());
        } else if (mongo != null) {
            endpoints.add(mongo.hostPort());
        } else if (zookeeper != null) {
            endpoints.addAll(zookeeper.hostPorts());
        } else {
            redis.forEach(r -> endpoints.add(r.hostPort()));
        }
    }

    /** A master, its replica in sync, and a Sentinel that knows both. */
    private void startSentinel() {
        RedisServer master = new RedisServer(dir);
        redis.add(master);
        redis.add(new RedisServer(dir, List.of("--replicaof", "127.0.0.1", Integer.toString(master.port()))));
        sentinel = new RedisSentinel(dir, master.port());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (sentinel.replicasUp() < 1 || !Harness.exec(List.of("redis-cli", "-p", Integer.toString(master.port()), "INFO",
                "replication"), 10).contains("state=online")) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the replica did not come in sync, or Sentinel did not see it, within 30 s; see " + dir);
            }
            Harness.sleep(100);
        }
    }

    /** Sentinel: the master now. */
    public RedisServer master() {
        return redis.get(masterIndex);
    }

    /** Sentinel: the replica now. */
    public RedisServer replica() {
        return redis.get(1 - masterIndex);
    }

    /** Sentinel: the Sentinel. */
    public RedisSentinel sentinel() {
        return sentinel;
    }

    /** Sentinel: after a failover, the replica is the master and the old master (restarted) its replica. */
    void swapRoles() {
        masterIndex = 1 - masterIndex;
    }

    /** The store. */
    public StoreSpec spec() {
        return spec;
    }

    /** The real endpoints ({@code host:port}), in URL order; empty for SQLite. */
    public List<String> endpoints() {
        return List.copyOf(endpoints);
    }

    /** The harness's own Redis processes (one for Redis, three for Redlock). */
    public List<RedisServer> redisServers() {
        return List.copyOf(redis);
    }

    /** The URL that reaches the store directly. */
    public String url() {
        return url(endpoints);
    }

    /**
     * The URL that reaches the store through the given endpoints (a worker's proxies).
     *
     * @param via one {@code host:port} per real endpoint, in the same order
     * @return the store URL
     */
    public String url(List<String> via) {
        return url(via, ZK_SESSION_TIMEOUT);
    }

    /**
     * The URL that reaches the store through the given endpoints, with a ZooKeeper session of
     * another length than the workers' (the CLI runs need room for a JVM's start).
     *
     * @param via one {@code host:port} per real endpoint, in the same order
     * @param zkSession the ZooKeeper session timeout (ignored by the other stores)
     * @return the store URL
     */
    public String url(List<String> via, java.time.Duration zkSession) {
        String u = switch (spec.kind()) {
            case SQLITE -> "jdbc:sqlite:" + dir.resolve("locks.db");
            case POSTGRESQL -> "jdbc:postgresql://" + via.get(0)
                    + "/test?user=postgres&connectTimeout=3&socketTimeout=15&turnstile.table=" + TABLE;
            case MARIADB -> "jdbc:mariadb://" + via.get(0)
                    + "/test?user=root&connectTimeout=3000&socketTimeout=15000&turnstile.table=" + TABLE;
            case REDIS -> "redis://" + via.get(0) + "?turnstile.timeout=2s";
            case REDLOCK -> "redlock://" + String.join(",", via) + "?turnstile.nodeTimeout=200ms";
            case REDIS_SENTINEL -> "redis-sentinel://" + via.get(0) + "?turnstile.timeout=2s"
                    + (spec.name().endsWith("-noack") ? "&turnstile.replicaAcks=0" : "") + "#" + RedisSentinel.MASTER_NAME;
            case MONGO -> "mongodb://" + via.get(0) + "/chaos?turnstile.timeout=2s";
            // connectTimeout bounds how long a call waits for a connection: a few session timeouts
            case ZOOKEEPER, ZOOKEEPER_ENSEMBLE -> "zookeeper://" + String.join(",", via) + "/chaos?turnstile.sessionTimeout="
                    + zkSession.toMillis() + "ms&turnstile.connectTimeout=2s";
        };
        return spec.urlPrefix() + u;
    }

    /** Creates the lock table where the store needs one. */
    public void applySchema() {
        String u = url();
        LockStores.factoryFor(u).applySchema(u);
    }

    /**
     * Restarts the store and returns once it accepts connections again: PostgreSQL with
     * {@code pg_ctlcluster … restart} in immediate mode (a crash: what was committed must survive),
     * the harness's Redis with SIGKILL and a start on the same port (everything is forgotten).
     */
    public void restart() {
        switch (spec.kind()) {
            case POSTGRESQL -> restartPostgres();
            case REDIS -> redis.get(0).restart();
            case MONGO -> mongo.restart();
            case ZOOKEEPER -> zookeeper.restart();
            default -> throw new IllegalStateException("the harness cannot restart " + spec.name());
        }
    }

    /** Restarts the machine's PostgreSQL and waits until it accepts connections. */
    public static void restartPostgres() {
        String version = Harness.exec(List.of("ls", "/etc/postgresql"), 10).trim().split("\\s+")[0];
        Harness.exec(List.of("pg_ctlcluster", "--skip-systemctl-redirect", "-m", "immediate", version, "main", "restart"), 120);
        awaitPostgres(60);
    }

    /** Waits until PostgreSQL accepts connections. */
    public static void awaitPostgres(int seconds) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        String host = POSTGRES.substring(0, POSTGRES.indexOf(':'));
        String port = POSTGRES.substring(POSTGRES.indexOf(':') + 1);
        while (true) {
            try {
                Harness.exec(List.of("pg_isready", "-q", "-h", host, "-p", port), 10);
                return;
            } catch (IllegalStateException e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("PostgreSQL did not accept connections within " + seconds + " s after the restart");
                }
                Harness.sleep(100);
            }
        }
    }

    /** The pid of the server process the store-pause fault freezes ({@link StoreSpec#pausable()}). */
    public long serverPid() {
        if (mongo != null) {
            return mongo.pid();
        }
        if (zookeeper != null && zookeeper.size() == 1) {
            return zookeeper.pid(0);
        }
        throw new IllegalStateException("the harness runs no single server process for " + spec.name());
    }

    /** ZooKeeper: the servers (one, or the ensemble's three). */
    public ZooKeeperProcess zookeeper() {
        return zookeeper;
    }

    /** Mongo: the server's JVM. */
    public MongoProcess mongo() {
        return mongo;
    }

    @Override
    public void close() {
        if (zookeeper != null) {
            zookeeper.close();
        }
        if (mongo != null) {
            mongo.close();
        }
        if (sentinel != null) {
            sentinel.close();
        }
        redis.forEach(RedisServer::close);
    }
}
