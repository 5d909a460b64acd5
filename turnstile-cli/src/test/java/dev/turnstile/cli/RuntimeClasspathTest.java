package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every store the CLI speaks, run by a child JVM on the CLI's runtime classpath (what its jar
 * holds), not on the test classpath: the in-JVM store tests cannot see a dependency the tests have
 * and the jar lacks (the ZooKeeper store once died in the jar with NoClassDefFoundError).
 */
class RuntimeClasspathTest {
    @TempDir Path dir;

    @Test
    void sqliteRunsFromTheJarsClasspath() throws Exception {
        runAndList(null);
    }

    @Test
    void postgresqlAndMariadbRunFromTheJarsClasspath() throws Exception {
        runAndList("jdbc:postgresql://127.0.0.1:5432/test?user=postgres&turnstile.createTable=true");
        runAndList("jdbc:mariadb://127.0.0.1:3306/test?user=root&turnstile.createTable=true");
    }

    @Test
    void redisRunsFromTheJarsClasspath() throws Exception {
        runAndList(RedisRunTest.REDIS);
    }

    @Test
    void zookeeperRunsFromTheJarsClasspath() throws Exception {
        try (TestingServer server = new TestingServer(true)) {
            runAndList("zookeeper://" + server.getConnectString() + "/cli-runtime");
        }
    }

    @Test
    void mongodbRunsFromTheJarsClasspath() throws Exception {
        MongoServer server = new MongoServer(new MemoryBackend());
        try {
            server.bind("127.0.0.1", 0);
            runAndList("mongodb://127.0.0.1:" + server.getLocalAddress().getPort() + "/cli_runtime");
        } finally {
            server.shutdownNow();
        }
    }

    /** {@code run} (the command must see its fence) then {@code locks}, each in a child JVM; null means the embedded store. */
    private void runAndList(String url) throws Exception {
        Cli cli = new Cli(dir);
        String lock = "rt-" + UUID.randomUUID().toString().substring(0, 8);
        String[] store = url == null ? new String[0] : new String[] {"--store", url};
        assertThat(spawn(cli, concat(new String[] {"run", "--lock", lock}, store, new String[] {"--", "sh", "-c", "test -n \"$TURNSTILE_FENCE\""})))
                .as("turnstile run on %s from the runtime classpath", url == null ? "the embedded store" : url).isZero();
        assertThat(spawn(cli, concat(new String[] {"locks"}, store))).as("turnstile locks on %s", url).isZero();
    }

    private static int spawn(Cli cli, String... args) throws Exception {
        Process p = cli.spawn(Map.of(), args);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("the CLI did not finish within 60 s: " + String.join(" ", args));
        }
        int code = p.exitValue();
        if (code != 0) {
            System.err.println(Files.readString(cli.stateHome.resolve("spawned.log")));
        }
        return code;
    }

    private static String[] concat(String[]... parts) {
        return Arrays.stream(parts).flatMap(Arrays::stream).toArray(String[]::new);
    }
}
