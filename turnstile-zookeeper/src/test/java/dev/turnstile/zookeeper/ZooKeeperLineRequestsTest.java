package dev.turnstile.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.spi.AcquireRequest;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the waiting line costs the server, counted by the server itself ({@code srvr}'s
 * {@code Received}) on a server of this test's own, so nothing else is counted. Requests, not
 * time: on a busy lock each request costs the server and every client alike, and the count is exact
 * whatever the machine's load. The figures are those of the design in {@code docs/stores/zookeeper.md};
 * a change that adds a request to queueing or to a hand-off fails here.
 */
class ZooKeeperLineRequestsTest {
    private static final Duration TTL = Duration.ofSeconds(30);
    private TestingServer server;
    private final List<AutoCloseable> open = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer(true);
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
        server.close();
    }

    /** A store of its own session; places are touched every 20 s, so no touch falls inside a count. */
    private ZooKeeperLockStore store() throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(server.getConnectString())
                .retryPolicy(new RetryNTimes(1, 100)).build();
        c.start();
        assertThat(c.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        open.add(c);
        ZooKeeperLockStore s = ZooKeeperLockStore.builder(c).basePath("/requests").queueTimeout(Duration.ofMinutes(1)).build();
        open.add(0, s);
        return s;
    }

    /** The server's count of requests received so far, less the {@code srvr} connection that asks. */
    private long received() throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.getPort())) {
            s.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
            for (String line : new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).split("\n")) {
                if (line.startsWith("Received:")) {
                    return Long.parseLong(line.substring("Received:".length()).trim());
                }
            }
        }
        throw new AssertionError("the server's srvr answer has no Received line");
    }

    /** Requests the server received during {@code step}, read after the clients' background work settled. */
    private long requests(ThrowingRunnable step) throws Exception {
        Thread.sleep(200);
        long before = received();
        step.run();
        Thread.sleep(200); // a watch that fires sets itself again in the background: count that too
        return received() - before - 1;
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static AcquireRequest waiting(String name, String token) {
        return new AcquireRequest(name, token, token, TTL, true);
    }

    @Test
    void queueingAndHandingOffCostNoMoreRequestsThanALineOfBareNodes() throws Exception {
        ZooKeeperLockStore holder = store();
        ZooKeeperLockStore first = store();
        ZooKeeperLockStore second = store();
        String name = "busy";
        CountDownLatch firstWoken = new CountDownLatch(1);
        CountDownLatch secondWoken = new CountDownLatch(1);
        first.watchReleases(name, t -> firstWoken.countDown());
        second.watchReleases(name, t -> secondWoken.countDown());
        holder.tryAcquire(new AcquireRequest(name, "h", "h", TTL)).orElseThrow();

        // Right behind the holder: its place (one transaction), a listing, and one read that judges
        // the holder and watches it.
        assertThat(requests(() -> assertThat(first.tryAcquire(waiting(name, "w1"))).isEmpty()))
                .as("requests to queue right behind the holder").isEqualTo(3);
        // Behind another waiter: its place, a listing, and a watch on the waiter ahead; the holder
        // is left to the waiter right behind it.
        assertThat(requests(() -> assertThat(second.tryAcquire(waiting(name, "w2"))).isEmpty()))
                .as("requests to queue behind a waiter").isEqualTo(3);

        // The release (a delete), and the woken waiter's one transaction: nothing left in front, and
        // the write that starts its lease. The waiter behind it is not woken and sends nothing: its
        // watch fires on a deletion only, not on the write that made the place ahead of it the holder.
        assertThat(requests(() -> {
            holder.release(name, "h", Duration.ZERO);
            assertThat(firstWoken.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(first.tryAcquire(waiting(name, "w1"))).isPresent();
        })).as("requests of a hand-off").isEqualTo(2);
        assertThat(first.turns()).as("the woken waiter's try was one transaction").isEqualTo(1);
        assertThat(secondWoken.getCount()).as("the waiter behind was not woken").isEqualTo(1);

        assertThat(requests(() -> {
            first.release(name, "w1", Duration.ZERO);
            assertThat(secondWoken.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(second.tryAcquire(waiting(name, "w2"))).isPresent();
        })).as("requests of the next hand-off").isEqualTo(2);
        second.release(name, "w2", Duration.ZERO);
    }
}
