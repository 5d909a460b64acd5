package dev.turnstile.bench;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.zookeeper.ZooKeeperLockStore;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;

/**
 * A waiter frozen in line (its JVM stopped with {@code SIGSTOP}, as a long GC pause, a VM migration
 * or a debugger would) on ZooKeeper, for Turnstile and for Curator's {@link InterProcessMutex}: how
 * long the live waiter behind it waits for the lock after the holder releases it. This is what the
 * promotion write of Turnstile's waiting line buys, the one request per hand-off that Curator's
 * mutex does not send (see {@code docs/stores/zookeeper.md}); the hand-off table shows its cost.
 *
 * <p>Per round and contender: this JVM takes the lock with one client; a child JVM (its own session,
 * {@code bench.frozen.sessionMs}, default 20 s, the most a server with {@code tickTime=1000} grants)
 * queues for it; once its node is in line, the child is stopped; this JVM releases, and another of
 * its clients, queued behind the frozen one, times how long until it holds the lock (at most 120 s).
 * The child is then killed. Rounds: {@code bench.frozen.rounds} (default 2).
 */
public final class FrozenWaiterBench {
    private static final String NAME = "frozen";
    private static final String TURNSTILE_BASE = "/bench-frozen";
    private static final String MUTEX_PATH = "/bench-frozen-mutex";
    private static final Duration TTL = Duration.ofSeconds(60);

    private FrozenWaiterBench() {}

    /**
     * Runs the rounds and appends the table to the report; with {@code child KIND} as arguments, is
     * the waiter that gets frozen.
     *
     * @param args none, or {@code child turnstile|curator}
     * @throws Exception if ZooKeeper cannot be reached or a child fails
     */
    public static void main(String[] args) throws Exception {
        Logging.quiet();
        String connect = BenchConfig.zookeeper();
        int sessionMs = Integer.getInteger("bench.frozen.sessionMs", 20_000);
        if (args.length == 2 && args[0].equals("child")) {
            child(args[1], connect, sessionMs);
            return;
        }
        int rounds = Integer.getInteger("bench.frozen.rounds", 2);
        Report report = new Report("contender (round)", "session timeout (negotiated)", "queue timeout",
                "wait of the live waiter after the release", "holder while frozen");
        for (int round = 1; round <= rounds; round++) {
            for (String kind : List.of("turnstile", "curator")) {
                Result r = round(kind, connect, sessionMs);
                System.err.printf(Locale.ROOT, "frozen waiter, %s round %d: %.2f s%n", kind, round, r.waitNanos / 1e9);
                report.row(label(kind) + " (" + round + ")", String.format(Locale.ROOT, "%.1f s", r.sessionMs / 1000.0),
                        kind.equals("turnstile") ? "3 s (default)" : "—", String.format(Locale.ROOT, "**%.2f s**", r.waitNanos / 1e9),
                        r.frozenHeld ? "the frozen waiter, until its session expired" : "nobody: its place expired and was deleted");
            }
        }
        report.emit("ZooKeeper: a waiter frozen in line", String.format(Locale.ROOT, "A JVM waiting for the lock is "
                + "stopped (SIGSTOP) once its node is in line; the holder releases; the table gives how long a live waiter "
                + "queued behind the frozen one then waits for the lock. Each waiter has its own Curator %s session "
                + "(requested %d ms; the server grants at most 20 ticks). TURNSTILE: `ZooKeeperLockStore`, "
                + "`acquire(name, lockAtMostFor 60 s, wait 120 s)`; CURATOR: `InterProcessMutex.acquire(120, SECONDS)`. "
                + "One ZooKeeper server on this machine.", RedisBench.version(CuratorFramework.class), sessionMs));
    }

    private static String label(String kind) {
        return kind.equals("turnstile") ? "TURNSTILE" : "CURATOR";
    }

    private record Result(long waitNanos, long sessionMs, boolean frozenHeld) {}

    private static CuratorFramework client(String connect, int sessionMs) throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connect).sessionTimeoutMs(sessionMs)
                .connectionTimeoutMs(5_000).retryPolicy(new RetryNTimes(3, 100)).build();
        c.start();
        if (!c.blockUntilConnected(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("cannot connect to ZooKeeper at " + connect);
        }
        return c;
    }

    /** The lock's parent node, whose children are the holder and the line. */
    private static String lockParent(String kind) {
        return kind.equals("turnstile") ? TURNSTILE_BASE + "/locks/" + NAME : MUTEX_PATH;
    }

    private static Result round(String kind, String connect, int sessionMs) throws Exception {
        List<AutoCloseable> open = new ArrayList<>();
        Process child = null;
        try {
            CuratorFramework holderClient = client(connect, sessionMs);
            open.add(0, holderClient);
            CuratorFramework liveClient = client(connect, sessionMs);
            open.add(0, liveClient);
            Runnable release;
            Waiter live;
            if (kind.equals("turnstile")) {
                Turnstile holder = Turnstile.builder(ZooKeeperLockStore.builder(holderClient).basePath(TURNSTILE_BASE).build()).build();
                open.add(0, holder);
                Lease lease = holder.acquire(NAME, LockOptions.lockAtMostFor(TTL), Duration.ofSeconds(10)).orElseThrow();
                release = lease::release;
                Turnstile waiter = Turnstile.builder(ZooKeeperLockStore.builder(liveClient).basePath(TURNSTILE_BASE).build()).build();
                open.add(0, waiter);
                live = () -> {
                    Optional<Lease> got = waiter.acquire(NAME, LockOptions.lockAtMostFor(TTL), Duration.ofSeconds(120));
                    got.ifPresent(Lease::release);
                    return got.isPresent();
                };
            } else {
                InterProcessMutex holder = new InterProcessMutex(holderClient, MUTEX_PATH);
                holder.acquire();
                release = () -> {
                    try {
                        holder.release();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                };
                InterProcessMutex waiter = new InterProcessMutex(liveClient, MUTEX_PATH);
                live = () -> {
                    boolean got = waiter.acquire(120, TimeUnit.SECONDS);
                    if (got) {
                        waiter.release();
                    }
                    return got;
                };
            }
            long sessionNegotiated = holderClient.getZookeeperClient().getZooKeeper().getSessionTimeout();
            String parent = lockParent(kind);
            child = startChild(kind);
            awaitLine(holderClient, kind, parent, 2, "the child queued");
            Thread.sleep(200); // its place is in line and watched: freeze it now
            signal(child, "STOP");
            Thread.sleep(100);
            long[] acquiredAt = {0};
            boolean[] got = {false};
            Thread liveThread = new Thread(() -> {
                try {
                    got[0] = live.get();
                    acquiredAt[0] = System.nanoTime();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            liveThread.start();
            awaitLine(holderClient, kind, parent, 3, "the live waiter queued");
            Thread.sleep(200);
            long released = System.nanoTime();
            release.run();
            liveThread.join(TimeUnit.SECONDS.toMillis(130));
            if (!got[0]) {
                throw new IllegalStateException(kind + ": the live waiter did not get the lock within 120 s");
            }
            long wait = acquiredAt[0] - released;
            return new Result(wait, sessionNegotiated, wait > TimeUnit.MILLISECONDS.toNanos(sessionNegotiated / 2));
        } finally {
            if (child != null) {
                signal(child, "KILL");
                child.waitFor(10, TimeUnit.SECONDS);
            }
            for (AutoCloseable c : open) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // best effort
                }
            }
        }
    }

    private interface Waiter {
        boolean get() throws Exception;
    }

    /**
     * Waits until {@code n} nodes are under the lock's parent; for Turnstile, until {@code n - 1} of
     * them are places in line (a first try that finds the lock busy makes a node and deletes it at
     * once: freezing the child then would freeze a busy attempt, not a waiter).
     */
    private static void awaitLine(CuratorFramework c, String kind, String parent, int n, String what) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            if (c.checkExists().forPath(parent) != null && inLine(c, kind, parent) >= n) {
                return;
            }
            if (System.nanoTime() > end) {
                throw new IllegalStateException("timed out waiting until " + what);
            }
            Thread.sleep(10);
        }
    }

    private static int inLine(CuratorFramework c, String kind, String parent) throws Exception {
        List<String> children = c.getChildren().forPath(parent);
        if (!kind.equals("turnstile")) {
            return children.size();
        }
        int places = 0;
        for (String child : children) {
            try {
                if (new String(c.getData().forPath(parent + "/" + child), StandardCharsets.UTF_8).contains("\"queued\":true")) {
                    places++;
                }
            } catch (org.apache.zookeeper.KeeperException.NoNodeException gone) {
                // a busy attempt, deleted meanwhile
            }
        }
        return places + 1;
    }

    private static Process startChild(String kind) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-Dbench.zookeeper=" + BenchConfig.zookeeper(),
                "-Dbench.frozen.sessionMs=" + Integer.getInteger("bench.frozen.sessionMs", 20_000),
                "-cp", System.getProperty("java.class.path"), FrozenWaiterBench.class.getName(), "child", kind));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        Thread drain = new Thread(() -> {
            try {
                while (out.readLine() != null) {
                    // the child's output is not needed; reading keeps it from blocking
                }
            } catch (Exception ignored) {
                // the child was killed
            }
        });
        drain.setDaemon(true);
        drain.start();
        return p;
    }

    private static void signal(Process p, String signal) throws Exception {
        new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start().waitFor();
    }

    /** The waiter that gets frozen: queues for the lock and would hold it for a minute. */
    private static void child(String kind, String connect, int sessionMs) throws Exception {
        CuratorFramework c = client(connect, sessionMs);
        if (kind.equals("turnstile")) {
            try (Turnstile t = Turnstile.builder(ZooKeeperLockStore.builder(c).basePath(TURNSTILE_BASE).build()).build()) {
                t.acquire(NAME, LockOptions.lockAtMostFor(TTL), Duration.ofSeconds(300));
                Thread.sleep(60_000);
            }
        } else {
            InterProcessMutex m = new InterProcessMutex(c, MUTEX_PATH);
            m.acquire(300, TimeUnit.SECONDS);
            Thread.sleep(60_000);
        }
    }
}
