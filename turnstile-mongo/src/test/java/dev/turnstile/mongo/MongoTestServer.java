package dev.turnstile.mongo;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The tests' MongoDB-wire server: mongo-java-server (Maven Central) in this JVM, on a free port of
 * 127.0.0.1, started once and shared by every test class (each test uses its own lock names). Child
 * JVMs of the contract suite reach it over TCP like any MongoDB server.
 */
final class MongoTestServer {
    /** The tests' database. */
    static final String DATABASE = "turnstile_test";
    private static MongoServer server;
    private static String url;

    private MongoTestServer() {}

    /** The URL of the shared server, database {@code turnstile_test}. */
    static synchronized String url() {
        if (server == null) {
            server = new MongoServer(new MemoryBackend());
            server.bind("127.0.0.1", 0);
            InetSocketAddress at = server.getLocalAddress();
            url = "mongodb://127.0.0.1:" + at.getPort() + "/" + DATABASE;
            Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
        }
        return url;
    }

    /**
     * A mongo-java-server in a JVM of its own whose wall clock is shifted by libfaketime (preloaded
     * into that JVM only), for tests that prove time is the server's.
     *
     * @param process the server's JVM
     * @param url its URL, database {@code database}
     */
    record SkewedServer(Process process, String url) implements AutoCloseable {
        @Override
        public void close() throws InterruptedException {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Starts a server whose clock is off by {@code faketime} (libfaketime's syntax, e.g. {@code -1h}). */
    static SkewedServer skewed(String faketime, String database) throws IOException {
        Path lib = Stream.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1")
                .map(Path::of).filter(Files::isReadable).findFirst()
                .orElseThrow(() -> new IllegalStateException("libfaketime is missing: scripts/services.sh installs it (apt-get install faketime)"));
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xshare:auto",
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), MongoServerMain.class.getName())
                .redirectErrorStream(true);
        pb.environment().putAll(Map.of("LD_PRELOAD", lib.toString(), "FAKETIME", faketime, "FAKETIME_DONT_FAKE_MONOTONIC", "1",
                "FAKETIME_FORCE_MONOTONIC_FIX", "0"));
        Process server = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null && !line.startsWith("port ")) {
            // JVM warnings before the port
        }
        if (line == null) {
            server.destroyForcibly();
            throw new IllegalStateException("the skewed server child exited before printing its port");
        }
        return new SkewedServer(server, "mongodb://127.0.0.1:" + line.substring(5).trim() + "/" + database);
    }
}
