package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The harness's ZooKeeper servers: real processes that die on SIGKILL, freeze on SIGSTOP and keep
 * their data across a restart. The ensemble (leader found by {@code srvr}, killed, a new one elected,
 * the old one back as a follower) is exercised by CI's {@code zookeeper-ensemble × leader-loss} cell
 * (ChaosSuiteTest), which fails when no new leader is elected or the old one does not rejoin; a test
 * of its own here would cost CI another three server starts.
 */
class ZooKeeperProcessTest {
    @TempDir
    Path dir;

    private static CuratorFramework client(String connect) {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connect).sessionTimeoutMs(1000)
                .connectionTimeoutMs(2000).retryPolicy(new RetryNTimes(20, 100)).build();
        c.start();
        return c;
    }

    @Test
    @Timeout(60)
    void aStandaloneServerIsKilledPausedAndRestartedWithWhatItAcknowledged() throws Exception {
        try (ZooKeeperProcess zk = ZooKeeperProcess.standalone(dir)) {
            assertThat(zk.size()).isOne();
            assertThat(zk.mode(0)).isEqualTo("standalone");
            long pid = zk.pid(0);
            assertThat(ProcessHandle.of(pid)).isPresent();
            String connect = zk.hostPorts().get(0);
            try (CuratorFramework c = client(connect)) {
                c.create().withMode(CreateMode.PERSISTENT).forPath("/kept", "acknowledged".getBytes(StandardCharsets.UTF_8));
            }

            zk.kill(0);
            assertThat(zk.pid(0)).isEqualTo(-1);
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
            assertThat(zk.mode(0)).isNull();

            zk.start(0);
            assertThat(zk.pid(0)).isNotEqualTo(pid);
            assertThat(zk.hostPorts()).containsExactly(connect); // same port
            try (CuratorFramework c = client(connect)) {
                assertThat(new String(c.getData().forPath("/kept"), StandardCharsets.UTF_8)).isEqualTo("acknowledged");
            }

            zk.restart();
            try (CuratorFramework c = client(connect)) {
                assertThat(c.checkExists().forPath("/kept")).isNotNull();
            }

            // SIGSTOP: the process lives but answers nothing until SIGCONT
            Harness.signal(zk.pid(0), "STOP");
            try {
                assertThat(zk.mode(0)).isNull();
            } finally {
                Harness.signal(zk.pid(0), "CONT");
            }
            assertThat(zk.mode(0)).isEqualTo("standalone");
        }
        Path cfg;
        try (var files = Files.list(dir)) {
            cfg = files.filter(p -> p.toString().endsWith(".cfg")).findFirst().orElseThrow();
        }
        assertThat(Files.readString(cfg)).contains("tickTime=100", "admin.enableServer=false", "dataDir=" + dir.toAbsolutePath());
    }
}
