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
 *
 * <p>Past 400 lines as the one list of the fault matrix's faults, each a small record here.
 */
public sealed interface Fault {

    /** The faults in report order, by name. */
    List<String> ALL = List.of("none", "kill", "pause", "partition", "latency", "restart", "redlock-minority",
            "redlock-majority", "clock", "failover", "store-pause", "session-expiry", "leader-loss");

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
            case "latency" -> new Latency(Duration.ofMillis(30));
            case "restart" -> new RestartStore();
            case "redlock-minority" -> new RedlockNodesDown(false);
            case "redlock-majority" -> new RedlockNodesDown(true);
            case "clock" -> new ClockJump();
            case "failover" -> new Failover();
            case "store-pause" -> new PauseStore();
            case "session-expiry" -> new SessionExpiry();
            case "leader-loss" -> new LeaderLoss();
            default -> throw new IllegalArgumentException("unknown fault '" + id + "': known faults are " + String.join(", ", ALL));
        };
    }

    /** How long to look for a holder before giving up on a round. */
    Duration FIND_HOLDER = Duration.ofSeconds(20);

    /**
     * A fault aimed at one worker: in the matrix always the holder; in the {@link Mixed} run the
     * holder or any other worker, at random.
     */
    sealed interface Targeted extends Fault {
        /** The holder this fault aims at in the matrix, or {@code null} if none turned up in time. */
        WorkerProc target(Cluster cluster);

        /** What {@link #inject} reports when {@link #target} found nobody. */
        String missed();

        /**
         * Hits one worker and waits until the fault is over.
         *
         * @param cluster the running workers and store
         * @param target the worker to hit
         * @param bystander it was chosen at random, not as the holder (recorded with the fault)
         */
        void hit(Cluster cluster, WorkerProc target, boolean bystander);

        @Override
        default String inject(Cluster cluster) {
            WorkerProc target = target(cluster);
            if (target == null) {
                return missed();
            }
            hit(cluster, target, false);
            return null;
        }
    }

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

    /** SIGKILL of the current holder (one in a long hold, as every hold of the short run is). */
    record KillHolder() implements Targeted {
        @Override public String id() { return "kill"; }
        @Override public boolean appliesTo(StoreSpec store) { return true; }
        @Override public Set<String> recoveryEvents() { return Set.of(Event.KILL); }
        @Override public String describe(ChaosConfig c) { return "SIGKILL of the current holder"; }
        @Override public WorkerProc target(Cluster cluster) { return cluster.awaitLongHolder(FIND_HOLDER); }
        @Override public String missed() { return "no holder to kill"; }
        @Override public void hit(Cluster cluster, WorkerProc target, boolean bystander) { cluster.kill(target, bystander); }
    }

    /** SIGSTOP of the current holder for longer than its TTL, then SIGCONT. */
    record PauseHolder() implements Targeted {
        @Override public String id() { return "pause"; }
        @Override public boolean appliesTo(StoreSpec store) { return true; }
        @Override public Set<String> recoveryEvents() { return Set.of(Event.PAUSE); }
        @Override public WorkerProc target(Cluster cluster) { return cluster.awaitFreshHolder(FIND_HOLDER); }
        @Override public String missed() { return "no holder to pause"; }

        @Override
        public String describe(ChaosConfig c) {
            return "SIGSTOP of the holder for " + c.outage().toMillis() + " ms (> TTL), then SIGCONT";
        }

        @Override
        public void hit(Cluster cluster, WorkerProc target, boolean bystander) {
            cluster.pause(target, bystander);
            Harness.sleep(cluster.config().outage().toMillis());
            cluster.resume(target);
        }
    }

    /** The holder's connections to the store blackholed both ways for longer than its TTL, then healed. */
    record Partition() implements Targeted {
        @Override public String id() { return "partition"; }
        @Override public boolean appliesTo(StoreSpec store) { return store.networked(); }
        @Override public boolean needsProxy() { return true; }
        @Override public Set<String> recoveryEvents() { return Set.of(Event.PARTITION); }
        @Override public WorkerProc target(Cluster cluster) { return cluster.awaitFreshHolder(FIND_HOLDER); }
        @Override public String missed() { return "no holder to partition"; }

        @Override
        public String describe(ChaosConfig c) {
            return "holder cut off from the store (proxy blackhole both ways) for " + c.outage().toMillis() + " ms, then healed";
        }

        @Override
        public void hit(Cluster cluster, WorkerProc target, boolean bystander) {
            target.proxies.forEach(TcpProxy::blackhole);
            cluster.record(target.id, Event.PARTITION, "all " + target.proxies.size() + " store endpoints"
                    + (bystander ? ", " + Cluster.BYSTANDER : ""));
            Harness.sleep(cluster.config().outage().toMillis());
            cluster.record(target.id, Event.HEAL, null);
            target.proxies.forEach(TcpProxy::heal);
        }
    }

    /**
     * Latency between every worker and the store, for {@link ChaosConfig#latencySpell()}.
     *
     * @param delay added to every chunk in each direction
     */
    record Latency(Duration delay) implements Fault {
        @Override public String id() { return "latency"; }
        @Override public boolean appliesTo(StoreSpec store) { return store.networked(); }
        @Override public boolean needsProxy() { return true; }

        @Override
        public String describe(ChaosConfig c) {
            return "+" + delay.toMillis() + " ms each way between every worker and the store for "
                    + c.latencySpell().toMillis() / 1000.0 + " s";
        }

        @Override
        public String inject(Cluster cluster) {
            cluster.record(-1, Event.DELAY_ON, delay.toMillis() + " ms each way");
            cluster.allProxies().forEach(p -> p.delay(delay));
            Harness.sleep(cluster.config().latencySpell().toMillis());
            cluster.allProxies().forEach(TcpProxy::heal);
            cluster.record(-1, Event.DELAY_OFF, null);
            return null;
        }
    }

    /**
     * A store restart while the lock is held: PostgreSQL (crash-restart), the harness's Redis (no
     * persistence), Mongo server or standalone ZooKeeper server.
     */
    record RestartStore() implements Fault {
        @Override public String id() { return "restart"; }
        @Override public boolean appliesTo(StoreSpec store) { return store.restartable(); }

        @Override
        public String describe(ChaosConfig c) {
            return "store restart while the lock is held (PostgreSQL: pg_ctlcluster restart -m immediate; "
                    + "Redis: SIGKILL and start again, no persistence; Mongo: SIGKILL of the server's JVM and start again on its file; "
                    + "ZooKeeper: SIGKILL of the server and start again on its data directory)";
        }

        @Override
        public String inject(Cluster cluster) {
            WorkerProc holder = cluster.awaitFreshHolder(FIND_HOLDER);
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
     * process (Mongo's JVM, a standalone ZooKeeper server).
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
            WorkerProc holder = cluster.awaitFreshHolder(FIND_HOLDER);
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
     * ZooKeeper: SIGSTOP of the holder just past its session timeout
     * ({@link StoreInstance#ZK_SESSION_TIMEOUT} + 600 ms, so the servers surely expire the session
     * on one of their 100 ms ticks), then SIGCONT. In the short run that is less than the TTL: the
     * lease is lost because the session is, and its node goes with it, before its TTL runs out; the
     * next holder comes in then, and the resumed holder must hear of its loss at once (its client
     * has not heard from the server for longer than the session timeout) and have its write fenced
     * off. Judged as a pause (PausedHolderChecker).
     */
    record SessionExpiry() implements Targeted {
        @Override public String id() { return "session-expiry"; }
        @Override public boolean appliesTo(StoreSpec store) { return store.sessions(); }
        @Override public Set<String> recoveryEvents() { return Set.of(Event.PAUSE); }
        @Override public WorkerProc target(Cluster cluster) { return cluster.awaitFreshHolder(FIND_HOLDER); }
        @Override public String missed() { return "no holder to pause"; }

        /** How long the holder stays stopped. */
        static Duration length() {
            return StoreInstance.ZK_SESSION_TIMEOUT.plusMillis(600);
        }

        @Override
        public String describe(ChaosConfig c) {
            return "SIGSTOP of the holder for " + length().toMillis() + " ms (> the " + StoreInstance.ZK_SESSION_TIMEOUT.toMillis()
                    + " ms session timeout" + (length().compareTo(c.ttl()) < 0 ? ", < TTL" : "") + "), then SIGCONT";
        }

        @Override
        public void hit(Cluster cluster, WorkerProc target, boolean bystander) {
            cluster.pause(target, bystander);
            Harness.sleep(length().toMillis());
            cluster.resume(target);
        }
    }

    /**
     * ZooKeeper ensemble: the leader (found with the {@code srvr} four-letter word) SIGKILLed while
     * the lock is held; the two others must elect a new leader (waited for, up to 30 s), and then
     * the old leader is started again on its data and rejoins as a follower. Clients connected to
     * the old leader move to another server; a session survives if that takes less than its
     * timeout, else it expires. Either way the servers agree on every write, so any overlap fails
     * and fences (zxids, whose epoch rises with the new leader) keep rising.
     */
    record LeaderLoss() implements Fault {
        @Override public String id() { return "leader-loss"; }
        @Override public boolean appliesTo(StoreSpec store) { return store.kind() == StoreSpec.Kind.ZOOKEEPER_ENSEMBLE; }

        @Override
        public String describe(ChaosConfig c) {
            return "ZooKeeper leader SIGKILLed while the lock is held, a new leader elected by the other two, then the old one "
                    + "restarted as a follower";
        }

        @Override
        public String inject(Cluster cluster) {
            WorkerProc holder = cluster.awaitFreshHolder(FIND_HOLDER);
            if (holder == null) {
                return "nobody held the lock";
            }
            ZooKeeperProcess zk = cluster.store().zookeeper();
            int leader = zk.leader();
            if (leader < 0) {
                return "no ZooKeeper server said it was the leader";
            }
            cluster.record(holder.id, Event.STORE_DOWN, "leader " + zk.hostPorts().get(leader) + " SIGKILLed");
            long start = System.nanoTime();
            zk.kill(leader);
            int next;
            while ((next = zk.leader()) < 0) {
                if (System.nanoTime() - start > Duration.ofSeconds(30).toNanos()) {
                    zk.start(leader);
                    return "no new leader was elected within 30 s";
                }
                Harness.sleep(20);
            }
            cluster.record(-1, Event.STORE_UP, "new leader " + zk.hostPorts().get(next) + " elected after "
                    + (System.nanoTime() - start) / 1_000_000 + " ms");
            zk.start(leader);
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
            WorkerProc holder = cluster.awaitFreshHolder(FIND_HOLDER);
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
     * The holder's wall clock jumped forward, then back, by {@link ChaosConfig#clockJump()}, with
     * libfaketime (the monotonic clock is left alone).
     */
    record ClockJump() implements Targeted {
        @Override public String id() { return "clock"; }
        @Override public boolean appliesTo(StoreSpec store) { return true; }
        @Override public boolean needsFaketime() { return true; }
        @Override public WorkerProc target(Cluster cluster) { return cluster.awaitFreshHolder(FIND_HOLDER); }
        @Override public String missed() { return "no holder to skew"; }

        @Override
        public String describe(ChaosConfig c) {
            String jump = c.clockJump().toSeconds() % 60 == 0 ? c.clockJump().toMinutes() + " min" : c.clockJump().toSeconds() + " s";
            return "holder's wall clock jumped +" + jump + ", then to -" + jump + ", then back, " + c.clockStep().toMillis()
                    + " ms each (libfaketime, monotonic clock untouched)";
        }

        @Override
        public void hit(Cluster cluster, WorkerProc target, boolean bystander) {
            long s = cluster.config().clockJump().toSeconds();
            String who = bystander ? ", " + Cluster.BYSTANDER : "";
            setClock(cluster, target, "+" + s + "s", who);
            Harness.sleep(cluster.config().clockStep().toMillis());
            setClock(cluster, target, "-" + s + "s", who);
            Harness.sleep(cluster.config().clockStep().toMillis());
            setClock(cluster, target, "+0s", who);
        }

        private static void setClock(Cluster cluster, WorkerProc w, String offset, String who) {
            try {
                Files.writeString(w.clockFile, offset + "\n");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            cluster.record(w.id, Event.CLOCK_JUMP, offset + who);
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
            WorkerProc holder = cluster.awaitFreshHolder(FIND_HOLDER);
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

    /**
     * The mixed run: a random schedule of every fault that applies to the store, seeded so that
     * the same seed gives the same schedule (which fault, holder or bystander, and the gaps between
     * faults; what the workers do meanwhile is up to the scheduler). Each step waits a random
     * 0..{@link ChaosConfig#settle()}, picks a fault, and aims a worker fault at the holder or, as
     * often, at any live worker (a bystander: one waiting in acquire, thinking, or holding after
     * all). A killed worker is replaced at once. On single-node stores only the faults under which
     * the store promises exclusion are drawn (no restart of a Redis without persistence, no clock
     * jump on SQLite, no failover), so any overlap fails; Redlock draws all of its faults.
     */
    final class Mixed implements Fault {
        private final long seed;
        private final Duration length;
        private final List<Fault> choices;
        private final java.util.Random random;
        private final java.util.Map<String, Integer> tally = new java.util.TreeMap<>();

        /**
         * A schedule for one store.
         *
         * @param seed the run's seed (printed, and accepted by {@code --seed})
         * @param length how long faults go on
         * @param store the store; its name is mixed into the seed, so each store has its own
         *     schedule and replaying one store alone gives the same one
         */
        public Mixed(long seed, Duration length, StoreSpec store) {
            this.seed = seed;
            this.length = length;
            this.random = new java.util.Random(seed * 31 + store.name().hashCode());
            this.choices = ALL.stream().filter(id -> !id.equals("none")).map(Fault::named)
                    .filter(f -> f.appliesTo(store) && (!store.singleNode() || keepsExclusion(f, store))).toList();
        }

        private static boolean keepsExclusion(Fault f, StoreSpec store) {
            return !(f instanceof Failover) && !(f instanceof RestartStore && !store.durable())
                    && !(f instanceof ClockJump && !store.ownClock());
        }

        /** The seed. */
        public long seed() {
            return seed;
        }

        /** How long faults go on. */
        public Duration length() {
            return length;
        }

        /** The faults drawn from. */
        public List<String> choices() {
            return choices.stream().map(Fault::id).toList();
        }

        /** What was injected so far, by fault (and target: holder or bystander), with counts. */
        public synchronized String tally() {
            StringBuilder b = new StringBuilder();
            tally.forEach((k, v) -> b.append(b.length() == 0 ? "" : ", ").append(k).append(" ×").append(v));
            return b.toString();
        }

        @Override public String id() { return "mixed"; }
        @Override public boolean appliesTo(StoreSpec store) { return true; }
        @Override public boolean needsProxy() { return choices.stream().anyMatch(Fault::needsProxy); }
        @Override public boolean needsFaketime() { return choices.stream().anyMatch(Fault::needsFaketime); }
        @Override public Set<String> recoveryEvents() { return Set.of(Event.KILL, Event.PAUSE, Event.PARTITION); }

        @Override
        public String describe(ChaosConfig c) {
            return "random schedule (seed " + seed + ") for " + length.toSeconds() + " s of " + String.join(", ", choices())
                    + ": a random 0-" + c.settle().toMillis() + " ms gap, then one fault; worker faults hit the holder or, "
                    + "as often, any live worker";
        }

        /** One step of the schedule: a gap, then one fault. */
        @Override
        public String inject(Cluster cluster) {
            Harness.sleep(random.nextLong(cluster.config().settle().toMillis() + 1));
            Fault f = choices.get(random.nextInt(choices.size()));
            String name = f.id();
            if (f instanceof Targeted t) {
                boolean bystander = random.nextBoolean();
                int pick = random.nextInt(1 << 20); // drawn every step, so the schedule does not depend on timing
                WorkerProc target = bystander ? null : cluster.awaitFreshHolder(Duration.ofSeconds(5));
                if (target == null) {
                    bystander = true;
                    target = cluster.anyWorker(pick);
                }
                if (target == null) {
                    return "no live worker to hit with " + name;
                }
                name += bystander ? " (bystander)" : " (holder)";
                t.hit(cluster, target, bystander);
                if (f instanceof KillHolder) {
                    cluster.spawn(); // keep K contenders
                }
                count(name);
                return null;
            }
            count(name);
            return f.inject(cluster);
        }

        private synchronized void count(String name) {
            tally.merge(name, 1, Integer::sum);
        }
    }
}
