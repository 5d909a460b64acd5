package dev.turnstile.chaos;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * A store the harness can run workers against, and what it promises.
 *
 * @param name the name in reports and on the command line
 * @param kind which store
 * @param urlPrefix put in front of every worker URL ({@code broken+} for the test-only broken store), or empty
 */
public record StoreSpec(String name, Kind kind, String urlPrefix) {

    /** The kinds of store. */
    public enum Kind {
        /** An SQLite file in the run directory. */
        SQLITE,
        /** The machine's PostgreSQL (127.0.0.1:5432, database test). */
        POSTGRESQL,
        /** The machine's MariaDB (127.0.0.1:3306, database test). */
        MARIADB,
        /** A redis-server the harness starts, without persistence. */
        REDIS,
        /** Redlock over three redis-servers the harness starts, without persistence. */
        REDLOCK,
        /**
         * A master, one replica and one Sentinel the harness starts, without persistence; workers
         * reach the master through the Sentinel.
         */
        REDIS_SENTINEL,
        /**
         * mongo-java-server over an H2 file in a JVM the harness starts (MongoProcess), committing
         * every command, so what it acknowledged survives its SIGKILL.
         */
        MONGO,
        /**
         * One ZooKeeper server (Debian's zookeeper 3.8) in a process the harness starts
         * (ZooKeeperProcess), with tickTime 100 ms; workers' sessions time out after
         * {@link StoreInstance#ZK_SESSION_TIMEOUT}.
         */
        ZOOKEEPER,
        /** Three ZooKeeper servers in processes of their own, one ensemble; workers list all three. */
        ZOOKEEPER_ENSEMBLE
    }

    /** The stores a CI machine of this project has, in report order. */
    public static final List<String> ALL = List.of("sqlite", "postgresql", "mariadb", "redis", "redlock", "mongo",
            "zookeeper");

    /**
     * Stores run only when named: Sentinel with replica acknowledgement (the default,
     * {@code turnstile.replicaAcks=auto}) and without it ({@code -noack}, so a failover can lose
     * grants and only the fence floor keeps order); and a three-server ZooKeeper ensemble (CI runs
     * only its leader-loss cell, see ChaosSuiteTest).
     */
    public static final List<String> EXTRA = List.of("redis-sentinel", "redis-sentinel-noack", "zookeeper-ensemble");

    /**
     * The store of that name.
     *
     * @param name one of {@link #ALL}
     * @return the store
     */
    public static StoreSpec named(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "sqlite" -> new StoreSpec("sqlite", Kind.SQLITE, "");
            case "postgresql", "postgres", "pg" -> new StoreSpec("postgresql", Kind.POSTGRESQL, "");
            case "mariadb", "mysql" -> new StoreSpec("mariadb", Kind.MARIADB, "");
            case "redis" -> new StoreSpec("redis", Kind.REDIS, "");
            case "redlock" -> new StoreSpec("redlock", Kind.REDLOCK, "");
            case "redis-sentinel" -> new StoreSpec("redis-sentinel", Kind.REDIS_SENTINEL, "");
            case "redis-sentinel-noack" -> new StoreSpec("redis-sentinel-noack", Kind.REDIS_SENTINEL, "");
            case "mongo", "mongodb" -> new StoreSpec("mongo", Kind.MONGO, "");
            case "zookeeper", "zk" -> new StoreSpec("zookeeper", Kind.ZOOKEEPER, "");
            case "zookeeper-ensemble", "zk-ensemble" -> new StoreSpec("zookeeper-ensemble", Kind.ZOOKEEPER_ENSEMBLE, "");
            default -> throw new IllegalArgumentException("unknown store '" + name + "': known stores are " + String.join(", ", ALL)
                    + ", " + String.join(", ", EXTRA));
        };
    }

    /**
     * One store that promises mutual exclusion as a whole: everything but Redlock (a ZooKeeper
     * ensemble counts: its servers agree on every write by quorum).
     */
    public boolean singleNode() {
        return kind != Kind.REDLOCK;
    }

    /** ZooKeeper: leases also hang on a session, which the servers expire when the client falls silent. */
    public boolean sessions() {
        return kind == Kind.ZOOKEEPER || kind == Kind.ZOOKEEPER_ENSEMBLE;
    }

    /** Fences that never go backwards (everything but Redlock). */
    public boolean safeFences() {
        return kind != Kind.REDLOCK;
    }

    /**
     * Committed grants survive a restart (the SQL stores, our Mongo, and ZooKeeper, which syncs its
     * transaction log before it answers; our Redis runs without persistence).
     */
    public boolean durable() {
        return kind == Kind.SQLITE || kind == Kind.POSTGRESQL || kind == Kind.MARIADB || kind == Kind.MONGO || sessions();
    }

    /**
     * Expiry is judged by a clock of the store's own (a server's), not by the clock of whichever
     * client runs the statement. False for SQLite: it runs inside each client process, so its
     * {@code now} is that process's wall clock.
     */
    public boolean ownClock() {
        return kind != Kind.SQLITE;
    }

    /**
     * Reached over TCP, so the proxy can put faults between workers and store. Not Sentinel: the
     * proxy could stand only before the Sentinel, which hands out the master's real address.
     */
    public boolean networked() {
        return kind != Kind.SQLITE && kind != Kind.REDIS_SENTINEL;
    }

    /** Replicas behind a master that Sentinel fails over. */
    public boolean failsOver() {
        return kind == Kind.REDIS_SENTINEL;
    }

    /**
     * The harness can restart it: the machine's PostgreSQL, or a Redis, Mongo or standalone
     * ZooKeeper server of its own (the ensemble's store-level fault is the loss of its leader).
     */
    public boolean restartable() {
        return kind == Kind.POSTGRESQL || kind == Kind.REDIS || kind == Kind.MONGO || kind == Kind.ZOOKEEPER;
    }

    /** The harness runs the server as one process of its own that it can SIGSTOP (Mongo's JVM, a standalone ZooKeeper). */
    public boolean pausable() {
        return kind == Kind.MONGO || kind == Kind.ZOOKEEPER;
    }

    /**
     * Starts what the store needs (Redis processes, an SQLite file name) in a run directory.
     *
     * @param dir the run directory
     * @return the running store
     */
    public StoreInstance start(Path dir) {
        return new StoreInstance(this, dir);
    }
}
