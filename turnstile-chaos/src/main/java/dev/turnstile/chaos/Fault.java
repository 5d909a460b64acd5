package dev.turnstile.chaos;

import dev.turnstile.chaos.Cluster.WorkerProc;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A fault scenario: what the harness does to the workers, the network or the store, once per round.
 * Each {@link #inject} returns a problem if the fault could not be injected (no holder to hit), or
 * {@code null}.
 */
public sealed interface Fault {

    /** The faults in report order, by name. */
    List<String> ALL = List.of("none", "kill", "pause", "partition", "latency", "restart", "redlock-minority",
            "redlock-majority", "clock", "failover", "store-pause");

    /** The name in reports and on the command line. */
    String id();

    /** Tells whether the fault makes sense on a store. */
    boolean appliesTo(StoreSpec store);

    /** Workers reach the store through per-worker {@link TcpProxy}s. */
    default boolean needsProxy() {
        return false;
    }

    /** Workers run under libfaketime. */
    default boolean needsFaketime() {
        return false;
    }

    /** The harness events after which the lock must be usable again within the recovery limit. */
    default Set<String> recoveryEvents() {
        return Set.of();
    }

    /** A one-line description for the report. */
    String describe(ChaosConfig config);

    /**
     * Injects one round of the fault and waits until it is over (the scenario then lets the run
     * settle).
     *
     * @param cluster the running workers and store
     * @return a problem that kept the fault from being injected, or {@code null}
     */
    String inject(Cluster cluster);

    /**
     * The fault of that name.
     *
     * @param id one of {@link #ALL}
     * @return the fault
     */
    static Fault named(String id) {
        return switch (id.toLowerCase(Locale.ROOT)) {
            case "none" -> new NoFault();
            case "kill" -> new KillHolder();
            case "pause" -> new PauseHolder();
            case "partition" -> new Partition();
            case "latency" -> new Latency(Duration.ofMillis(30), Duration.ofSeconds(4));
            case "restart" -> new RestartStore();
            case "redlock-minority" -> new RedlockNodesDown(false);
            case "redlock-majority" -> new RedlockNodesDown(true);
            case "clock" -> new ClockJump(Duration.ofMinutes(5));
            case "failover" -> new Failover();
            case "store-pause" -> new PauseStore();
            default -> throw new IllegalArgumentException("unknown fault '" + id + "': known faults are " + String.join(", ", ALL));
        };
    }

    /** A holder that acquired at most this long ago still has most of its hold ahead of it. */
    private static Duration fresh(ChaosConfig c) {
        return c.hold().dividedBy(3);
    }

    /** How long to look for a holder before giving up on a round. */
    Duration FIND_HOLDER = Duration.ofSeconds(20);

    /** No fault: the control run. */
    record NoFault() implements Fault {
        @Override public String id() { return "none"; }
        @Override public boolean appliesTo(StoreSpec store) { return true; }
        @Override public String describe(ChaosConfig c) { return "no fault: steady contention (control)"; }

        @Override
        public String inject(Cluster cluster) {
            Harness.sleep(cluster.config().outage().toMillis()); // as long as the other runs
            return null;
        }
    }

    /** SIGKILL of the current holder. */
    record KillHolder() implements Fault {
        @Override public String id() { return "kill"; }
        @Override public boolean appliesTo(StoreSpec store) { return true; }
        @Override public Set<String> recoveryEvents() { return Set.of(Event.KILL); }
        @Override public String describe(ChaosConfig c) { return "SIGKILL of the current holder"; }

        @Override
        public String inject(Cluster cluster) {
            WorkerProc holder = cluster.awaitHolder(Duration.ofDays(1), FIND_HOLDER);
            if (holder == null) {
                return "no holder to kill";
            }
            cluster.kill(holder);
            return null;
        }
    }

    /** SIGSTOP of the current holder for longer than its TTL, then SIGCONT. */
    record PauseHolder() implements Fault {
        @Override public String id() { return "pause"; }
        @Override public boolean appliesTo(StoreSpec store) { return true; }
        @Override public Set<String> recoveryEvents() { return Set.of(Event.PAUSE); }

        @Override
        public String describe(ChaosConfig c) {
            return "SIGSTOP of the holder for " + c.outage().toMillis() + " ms (> TTL), then SIGCONT";
        }

        @Override
        public String inject(Cluster cluster) {
            WorkerProc holder = cluster.awaitHolder(fresh(cluster.config()), FIND_HOLDER);
            if (holder == null) {
                return "no holder to pause";
            }
            cluster.pause(holder);
            Harness.sleep(cluster.config().outage().toMillis());
            cluster.resume(holder);
            return null;
        }
    }

    /** The holder's connections to the store blackholed both ways for longer than its TTL, then healed. */
    record Partition() implements Fault {
        @Override public String id() { return "partition"; }
        @Override public boolean appliesTo(StoreSpec store) { return store.networked(); }
        @Override public boolean needsProxy() { return true; }
        @Override public Set<String> recoveryEvents() { return Set.of(Event.PARTITION); }

        @Override
        public String describe(ChaosConfig c) {
            return "holder cut off from the store (proxy blackhole both ways) for " + c.outage().toMillis() + " ms, then healed";
        }

        @Override
        public String inject(Cluster cluster) {
            WorkerProc holder = cluster.awaitHolder(fresh(cluster.config()), FIND_HOLDER);
            if (holder == null) {
                return "no holder to partition";
            }
            holder.proxies.forEach(TcpProxy::blackhole);
            cluster.record(holder.id, Event.PARTITION, "all " + holder.proxies.size() + " store endpoints");
            Harness.sleep(cluster.config().outage().toMillis());
            cluster.record(holder.id, Event.HEAL, null);
            holder.proxies.forEach(TcpProxy::heal);
            return null;
        }
    }

    /**
     * Latency between every worker and the store.
     *
     * @param delay added to every chunk in each direction
     * @param length how long it lasts
     */
    record Latency(Duration delay, Duration length) implements Fault {
        @Override public String id() { return "latency"; }
        @Override public boolean appliesTo(StoreSpec store) { return store.networked(); }
        @Override public boolean needsProxy() { return true; }

        @Override
        public String describe(ChaosConfig c) {
            return "+" + delay.toMillis() + " ms each way between every worker and the store for " + length.toSeconds() + " s";
        }

        @Override
        public String inject(Cluster cluster) {
            cluster.record(-1, Event.DELAY_ON, delay.toMillis() + " ms each way");
            cluster.allProxies().forEach(p -> p.delay(delay));
            Harness.sleep(length.toMillis());
            cluster.allProxies().forEach(TcpProxy::heal);
            cluster.record(-1, Event.DELAY_OFF, null);
            return null;
        }
    }

    /** A store restart while the lock is held: PostgreSQL (crash-restart), the harness's Redis (no persistence) or Mongo server. */
    record RestartStore() implements Fault {
        @Override public String id() { return "restart"; }
        @Override public boolean appliesTo(StoreSpec store) { return store.restartable(); }

        @Override
        public String describe(ChaosConfig c) {
            return "store restart while the lock is held (PostgreSQL: pg_ctlcluster restart -m immediate; "
                    + "Redis: SIGKILL and start again, no persistence; Mongo: SIGKILL of the server's JVM and start again on its file)";
        }

        @Override
        public String inject(Cluster cluster) {
            WorkerProc holder = cluster.awaitHolder(fresh(cluster.config()), FIND_HOLDER);
            if (holder == null) {
                return "nobody held the lock to restart under";
            }
            cluster.record(holder.id, Event.STORE_DOWN, cluster.store().spec().name());
            cluster.store().restart();
            cluster.record(-1, Event.STORE_UP, null);
            return null;
        }
    }

    /**
     * SIGSTOP of the store's own server process while the lock is held, for longer than the TTL, then
     * SIGCONT: every call of every worker times out meanwhile (the holder must report its loss by its
     * deadline), and the frozen server then runs whatever reached its socket (late acquires and
     * renewals whose callers gave up on them). Only where the harness runs the server itself as one
     * process (Mongo's JVM).
     */
    record PauseStore() implements Fault {
        @Override public String id() { return "store-pause"; }
        @Override public boolean appliesTo(StoreSpec store) { return store.pausable(); }

        @Override
        public String describe(ChaosConfig c) {
            return "SIGSTOP of the store's server process for " + c.outage().toMillis() + " ms (> TTL) while the lock is held, "
                    + "then SIGCONT";
        }

        @Override
        public String inject(Cluster cluster) {
            WorkerProc holder = cluster.awaitHolder(fresh(cluster.config()), FIND_HOLDER);
            if (holder == null) {
                return "nobody held the lock to freeze the store under";
            }
            long pid = cluster.store().serverPid();
            cluster.record(holder.id, Event.STORE_DOWN, cluster.store().spec().name() + " SIGSTOPped (pid " + pid + ")");
            Harness.signal(pid, "STOP");
            try {
                Harness.sleep(cluster.config().outage().toMillis());
            } finally {
                Harness.signal(pid, "CONT");
            }
            cluster.record(-1, Event.STORE_UP, null);
            return null;
        }
    }

    /**
     * Redlock nodes SIGKILLed while the lock is held, and restarted empty after more than a TTL.
     *
     * @param majority two of three nodes rather than one
     */
    record RedlockNodesDown(boolean majority) implements Fault {
        @Override public String id() { return majority ? "redlock-majority" : "redlock-minority"; }
        @Override public boolean appliesTo(StoreSpec store) { return store.kind() == StoreSpec.Kind.REDLOCK; }

        @Override
        public String describe(ChaosConfig c) {
            return (majority ? "2 of 3" : "1 of 3") + " Redlock nodes SIGKILLed for " + c.outage().toMillis()
                    + " ms, then restarted empty";
        }

        @Override
        public String inject(Cluster cluster) {
            WorkerProc holder = cluster.awaitHolder(fresh(cluster.config()), FIND_HOLDER);
            if (holder == null) {
                return "nobody held the lock";
            }
            List<RedisServer> nodes = cluster.store().redisServers().subList(0, majority ? 2 : 1);
            cluster.record(holder.id, Event.NODES_DOWN, nodes.size() + " of " + cluster.store().redisServers().size());
            nodes.forEach(RedisServer::kill);
            Harness.sleep(cluster.config().outage().toMillis());
            nodes.forEach(RedisServer::start);
            cluster.record(-1, Event.NODES_UP, null);
            return null;
        }
    }

    /**
     * The holder's wall clock jumped forward, then back, with libfaketime (the monotonic clock is
     * left alone).
     *
     * @param jump how far
     */
    record ClockJump(Duration jump) implements Fault {
        @Override public String id() { return "clock"; }
        @Override public boolean appliesTo(StoreSpec store) { return true; }
        @Override public boolean needsFaketime() { return true; }

        @Override
        public String describe(ChaosConfig c) {
            return "holder's wall clock jumped +" + jump.toMinutes() + " min, then to -" + jump.toMinutes()
                    + " min, then back (libfaketime, monotonic clock untouched)";
        }

        @Override
        public String inject(Cluster cluster) {
            WorkerProc holder = cluster.awaitHolder(fresh(cluster.config()), FIND_HOLDER);
            if (holder == null) {
                return "no holder to skew";
            }
            long s = jump.toSeconds();
            setClock(cluster, holder, "+" + s + "s");
            Harness.sleep(2500);
            setClock(cluster, holder, "-" + s + "s");
            Harness.sleep(2500);
            setClock(cluster, holder, "+0s");
            return null;
        }

        private static void setClock(Cluster cluster, WorkerProc w, String offset) {
            try {
                Files.writeString(w.clockFile, offset + "\n");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            cluster.record(w.id, Event.CLOCK_JUMP, offset);
        }
    }

    /**
     * A Sentinel failover that loses the last writes: while the lock is held, the replica is frozen
     * and cut off (SIGSTOP, then {@code CLIENT KILL TYPE replica} on the master, so nothing the
     * master writes reaches it) for the outage; then the master is SIGKILLed and the replica
     * resumed, and Sentinel promotes it, without the writes of the outage (grants, extensions,
     * fence bumps). The old master comes back empty as the new master's replica.
     */
    record Failover() implements Fault {
        @Override public String id() { return "failover"; }
        @Override public boolean appliesTo(StoreSpec store) { return store.failsOver(); }

        @Override
        public String describe(ChaosConfig c) {
            return "Sentinel failover to a lagging replica: replica frozen and cut off for " + c.outage().toMillis()
                    + " ms while the lock is held, then the master SIGKILLed and the replica promoted without those writes";
        }

        @Override
        public String inject(Cluster cluster) {
            WorkerProc holder = cluster.awaitHolder(fresh(cluster.config()), FIND_HOLDER);
            if (holder == null) {
                return "nobody held the lock";
            }
            StoreInstance s = cluster.store();
            RedisServer master = s.master();
            RedisServer replica = s.replica();
            cluster.record(holder.id, Event.REPLICA_LAG, "replica " + replica.port() + " frozen and cut off");
            Harness.signal(replica.pid(), "STOP");
            Harness.exec(List.of("redis-cli", "-p", Integer.toString(master.port()), "CLIENT", "KILL", "TYPE", "replica"), 10);
            Harness.sleep(cluster.config().outage().toMillis());
            cluster.record(-1, Event.STORE_DOWN, "master " + master.port() + " SIGKILLed");
            master.kill();
            Harness.signal(replica.pid(), "CONT");
            long start = System.nanoTime();
            while (s.sentinel().masterPort() != replica.port()) {
                if (System.nanoTime() - start > Duration.ofSeconds(60).toNanos()) {
                    return "Sentinel did not promote the replica within 60 s";
                }
                Harness.sleep(50);
            }
            cluster.record(-1, Event.STORE_UP, "replica " + replica.port() + " promoted after "
                    + (System.nanoTime() - start) / 1_000_000 + " ms");
            master.start(List.of("--replicaof", "127.0.0.1", Integer.toString(replica.port())));
            s.swapRoles();
            return null;
        }
    }
}
