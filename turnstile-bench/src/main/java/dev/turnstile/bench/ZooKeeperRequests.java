package dev.turnstile.bench;

import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.zookeeper.ZooKeeperLockStore;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * Counts the requests one acquire+release sends to ZooKeeper, for the floor and for Turnstile, by
 * the server's own counter ({@code srvr}: {@code Received}) before and after N cycles on one thread.
 * Run it alone against a server nobody else uses ({@code bench.zookeeper}); the count is exact
 * whatever the load, unlike the timings.
 */
public final class ZooKeeperRequests {
    private ZooKeeperRequests() {}

    /**
     * Prints requests per cycle for each, three times.
     *
     * @param args the number of cycles per measurement (default 500)
     * @throws Exception if ZooKeeper cannot be reached
     */
    public static void main(String[] args) throws Exception {
        Logging.quiet();
        String connect = BenchConfig.zookeeper();
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 500;
        CuratorFramework curator = CuratorFrameworkFactory.builder().connectString(connect).retryPolicy(new RetryNTimes(1, 100)).build();
        curator.start();
        if (!curator.blockUntilConnected(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("cannot connect to ZooKeeper at " + connect);
        }
        try (ZooKeeperLockStore store = ZooKeeperLockStore.builder(curator).basePath("/bench-requests").build();
                Turnstile turnstile = Turnstile.builder(store).build()) {
            ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
            curator.create().orSetData().creatingParentsIfNeeded().forPath("/bench-requests-floor/x");
            LockOptions options = LockOptions.lockAtMostFor(Duration.ofSeconds(30));
            for (int round = 1; round <= 3; round++) {
                long r0 = received(connect);
                for (int i = 0; i < n; i++) {
                    zk.delete(zk.create("/bench-requests-floor/x/n-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                            CreateMode.EPHEMERAL_SEQUENTIAL), -1);
                }
                long r1 = received(connect);
                for (int i = 0; i < n; i++) {
                    turnstile.tryAcquire("x", options).orElseThrow().release();
                }
                long r2 = received(connect);
                // Each srvr connection counts as one request of its own: take it off.
                System.out.printf(Locale.ROOT, "round %d: FLOOR %.2f requests per acquire+release, TURNSTILE %.2f%n", round,
                        (r1 - r0 - 1) / (double) n, (r2 - r1 - 1) / (double) n);
            }
        } finally {
            curator.close();
        }
    }

    static long received(String connect) throws Exception {
        String[] hp = connect.split(",")[0].split(":");
        try (java.net.Socket s = new java.net.Socket(hp[0], Integer.parseInt(hp[1]))) {
            s.getOutputStream().write("srvr".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            for (String line : new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII).split("\n")) {
                if (line.startsWith("Received:")) {
                    return Long.parseLong(line.substring("Received:".length()).trim());
                }
            }
        }
        throw new IllegalStateException("the server's srvr answer has no Received line");
    }
}
