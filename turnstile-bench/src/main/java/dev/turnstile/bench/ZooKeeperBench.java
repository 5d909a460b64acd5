package dev.turnstile.bench;

import dev.turnstile.zookeeper.ZooKeeperLockStore;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;

/**
 * ZooKeeper side by side, on one server ({@code bench.zookeeper}, host:port), in one JVM, over one
 * shared Curator client: uncontended acquire+release with 1 and 8 threads ({@code bench.threads}),
 * each thread on its own name, for the bare-client floor ({@code create(EPHEMERAL_SEQUENTIAL)} +
 * {@code delete}), Turnstile's {@link ZooKeeperLockStore} and Curator's {@link InterProcessMutex};
 * ratios to the floor slice beside each slice, as {@link AcquireReleaseBench} does for SQL.
 */
public final class ZooKeeperBench {
    private ZooKeeperBench() {}

    /**
     * Runs the scenario and appends its table to the report.
     *
     * @param args ignored; use {@code -Dbench.*} system properties
     * @throws Exception if ZooKeeper cannot be reached
     */
    public static void main(String[] args) throws Exception {
        Logging.quiet();
        String connect = System.getProperty("bench.zookeeper", "127.0.0.1:2181");
        int slices = BenchConfig.slices();
        long sliceNanos = TimeUnit.MILLISECONDS.toNanos(BenchConfig.sliceMillis());
        long warmupNanos = TimeUnit.MILLISECONDS.toNanos(BenchConfig.warmupMillis());
        List<Integer> threadCounts = BenchConfig.threadCounts();
        Random shuffle = new Random(BenchConfig.seed());

        CuratorFramework curator = CuratorFrameworkFactory.builder().connectString(connect).sessionTimeoutMs(10_000)
                .connectionTimeoutMs(5_000).retryPolicy(new RetryNTimes(1, 100)).build();
        curator.start();
        if (!curator.blockUntilConnected(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("cannot connect to ZooKeeper at " + connect);
        }
        String zkVersion = serverVersion(connect);
        List<Contender> contenders = new ArrayList<>();
        try (SliceRunner runner = new SliceRunner(Collections.max(threadCounts))) {
            curator.create().orSetData().creatingParentsIfNeeded().forPath("/bench");
            ZooKeeperFloorContender floor = new ZooKeeperFloorContender(curator.getZookeeperClient().getZooKeeper());
            contenders.add(floor);
            contenders.add(new TurnstileContender(ZooKeeperLockStore.builder(curator).basePath("/bench-turnstile").build(), true));
            contenders.add(new CuratorMutexContender(curator));
            Report report = AcquireReleaseBench.newReport("store");
            for (int threads : threadCounts) {
                SliceRunner.Paired<Contender, SliceResult> results = AcquireReleaseBench.measure(runner, contenders, threads, slices,
                        warmupNanos, sliceNanos, shuffle);
                System.err.printf("zookeeper, %d thread(s): %d slices done%n", threads, slices);
                AcquireReleaseBench.addRows(report, "zookeeper", threads, results, floor);
            }
            report.emit("ZooKeeper: acquire + release, uncontended", String.format(Locale.ROOT,
                    "%d slices of %d ms per contender, each beside a floor slice (pairs in shuffled order, alternating "
                            + "which goes first); warm-up %d ms per contender; one ZooKeeper server (%s, standalone, its own "
                            + "process on this machine, dataDir under /tmp), one Curator %s client shared by every "
                            + "contender. FLOOR = the bare ZooKeeper client: `create(EPHEMERAL_SEQUENTIAL)` under the lock's "
                            + "parent, then `delete` (version -1): two writes, no check, no fence. TURNSTILE = Turnstile over "
                            + "`ZooKeeperLockStore.builder(curator)`: one transaction (`multi`) of `create(EPHEMERAL_SEQUENTIAL)` "
                            + "with JSON data and a write to the parent, whose returned stat says the node is alone (so no "
                            + "listing), then release by `delete` with the node's version (two round trips, as the floor; "
                            + "fence = czxid). CURATOR_MUTEX = Curator's `InterProcessMutex` (one per name): "
                            + "`acquire(0, ms)` + `release()`. Ratios are per slice against the FLOOR slice beside it: "
                            + "median [min–max]; above 1 means slower than the floor.",
                    slices, BenchConfig.sliceMillis(), BenchConfig.warmupMillis(), zkVersion,
                    RedisBench.version(CuratorFramework.class)));
        } finally {
            for (Contender c : contenders) {
                c.close();
            }
            curator.close();
        }
    }

    /** The server's version line, by the {@code srvr} four-letter command. */
    private static String serverVersion(String connect) {
        String[] hp = connect.split(",")[0].split(":");
        try (java.net.Socket s = new java.net.Socket(hp[0], Integer.parseInt(hp[1]))) {
            s.getOutputStream().write("srvr".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String all = new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("version: ([0-9.]+)").matcher(all);
            return m.find() ? "ZooKeeper " + m.group(1) : "ZooKeeper (version unknown)";
        } catch (Exception e) {
            return "ZooKeeper (version unknown)";
        }
    }
}
