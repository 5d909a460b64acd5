package dev.turnstile.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.Lease;
import dev.turnstile.LeaseLoss;
import dev.turnstile.LockOptions;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStores;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.Test;

/** A three-node ensemble loses its leader while a lease is held: exclusion holds and fences keep rising. */
class ZooKeeperEnsembleTest {

    /** The server's role by the {@code srvr} four-letter command (allowed by default). */
    static String mode(int port) {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(2_000);
            OutputStream out = s.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
            for (String line; (line = in.readLine()) != null; ) {
                if (line.startsWith("Mode: ")) {
                    return line.substring(6).trim();
                }
            }
        } catch (Exception e) {
            return "down";
        }
        return "unknown";
    }

    @Test
    void leaderLossKeepsExclusionAndFencesRise() throws Exception {
        try (TestingCluster cluster = new TestingCluster(3)) {
            cluster.start();
            InstanceSpec leader = null;
            long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (leader == null && System.nanoTime() < until) {
                for (InstanceSpec spec : cluster.getInstances()) {
                    if (mode(spec.getPort()).equals("leader")) {
                        leader = spec;
                    }
                }
                Thread.sleep(100);
            }
            assertThat(leader).as("the ensemble elected a leader").isNotNull();
            String url = "zookeeper://" + cluster.getConnectString() + "/ensemble-test?turnstile.sessionTimeout=8s&turnstile.connectTimeout=2s";
            try (Turnstile holder = Turnstile.builder(LockStores.open(url)).build();
                    Turnstile other = Turnstile.builder(LockStores.open(url)).build()) {
                String name = "leader-loss-" + System.nanoTime();
                CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();
                Lease lease = holder.tryAcquire(name, LockOptions.builder().lockAtMostFor(Duration.ofSeconds(30))
                        .keepAlive(true).onLost(lost::complete).build()).orElseThrow();
                assertThat(other.tryAcquire(name, LockOptions.lockAtMostFor(Duration.ofSeconds(5)))).isEmpty();

                assertThat(cluster.killServer(leader)).isTrue();
                // Until the ensemble answers again, the other client gets errors or "busy", never the lock
                // while the holder still believes it holds it.
                boolean answered = false;
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (!answered && System.nanoTime() < deadline) {
                    try {
                        Optional<Lease> stolen = other.tryAcquire(name, LockOptions.lockAtMostFor(Duration.ofSeconds(5)));
                        if (stolen.isPresent()) {
                            assertThat(lost).as("the holder was told before another client got the lock").isDone();
                            stolen.get().release();
                        }
                        answered = true;
                    } catch (StoreUnavailableException electing) {
                        Thread.sleep(200);
                    }
                }
                assertThat(answered).as("the two remaining servers serve again").isTrue();
                // The holder's own connection may still be re-establishing (it was on the dead leader):
                // it either extends (its node survived the leader change) or reports the lease lost.
                long extendUntil = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                boolean extended = false;
                while (!extended && !lost.isDone() && System.nanoTime() < extendUntil) {
                    try {
                        lease.extend(Duration.ofSeconds(30));
                        extended = true;
                    } catch (StoreUnavailableException reconnecting) {
                        Thread.sleep(200);
                    } catch (dev.turnstile.LeaseLostException gone) {
                        assertThat(lost).isDone();
                    }
                }
                assertThat(extended || lost.isDone()).as("extended or reported lost").isTrue();
                lease.release();
                Lease next = other.acquire(name, LockOptions.lockAtMostFor(Duration.ofSeconds(5)), Duration.ofSeconds(30))
                        .orElseThrow();
                assertThat(next.fence()).isGreaterThan(lease.fence());
                assertThat(next.fence() >>> 32).as("the fence (a zxid) carries the new leader's epoch")
                        .isGreaterThan(lease.fence() >>> 32);
                next.release();
            }
        }
    }
}
