package dev.turnstile.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** mongodb:// URLs: what is accepted, and a clear refusal, without the password, for the rest. */
class MongoUrlTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "mongodb://127.0.0.1:27017                       | names no database",
        "mongodb://127.0.0.1:27017/                      | names no database",
        "mongodb://127.0.0.1:27017/?w=1                  | names no database",
        "mongodb://127.0.0.1:27017/a b                   | databaseName does not contain",
        "mongodb://127.0.0.1:27017/bad$db                | it contains '$'",
        "mongodb://127.0.0.1:99999/app                   | port 99999 is out of range (1-65535)",
        "mongodb://127.0.0.1:0/app                       | port 0 is out of range (1-65535)",
        "mongodb://127.0.0.1:65536/app                   | port 65536 is out of range (1-65535)",
        "mongodb://u:pw@h1,127.0.0.1:99999999999/app     | port 99999999999 is out of range (1-65535)",
        "mongodb://[::1]:-1/app                          | port -1 is out of range (1-65535)",
        "mongodb://127.0.0.1:/app                        | '127.0.0.1:' has an empty port",
        "mongodb://127.0.0.1:abc/app                     | port 'abc' of '127.0.0.1:abc' is not a number",
        "mongodb:///app                                  | malformed MongoDB URL",
        "mongodb://127.0.0.1/app?authMechanism=NOPE&turnstile.timeout=1s | malformed MongoDB URL",
        "mongodb://127.0.0.1/app?turnstile.colection=x   | unknown option 'turnstile.colection'",
        "mongodb://127.0.0.1/app?turnstile.timeout=0s    | out of range: give 10ms to 1h",
        "mongodb://127.0.0.1/app?turnstile.timeout=999999999s | out of range: give 10ms to 1h",
        "mongodb://127.0.0.1/app?turnstile.timeout=5     | turnstile.timeout=5 in the store URL is not a duration",
        "mongodb://127.0.0.1/a.b                         | names database 'a' and collection 'b'",
        "mongodb://127.0.0.1/app?turnstile.collection=system.x | not a usable collection name",
    })
    void badUrlsAreRefusedWithAReason(String url, String reason) {
        assertThatThrownBy(() -> LockStores.open(url)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(reason);
    }

    @Test
    void schemaIsEmptyButChecksTheUrl() {
        assertThat(LockStores.factoryFor("mongodb://h/app").schema("mongodb://h/app")).isEmpty();
        assertThatThrownBy(() -> LockStores.factoryFor("mongodb://h").schema("mongodb://h")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("names no database");
    }

    @Test
    void thePasswordNeverShows() {
        String secret = "s3cr3tpw";
        for (String url : new String[] {"mongodb://user:" + secret + "@127.0.0.1:27017", "mongodb://user:" + secret + "@127.0.0.1:99999/app",
                "mongodb://user:" + secret + "@127.0.0.1/app?turnstile.nope=1"}) {
            assertThatThrownBy(() -> LockStores.open(url)).isInstanceOf(IllegalArgumentException.class)
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain(secret));
        }
        try (LockStore store = LockStores.open("mongodb://user:" + secret + "@127.0.0.1:1/app?turnstile.timeout=1s")) {
            assertThat(store.description()).isEqualTo("mongodb://127.0.0.1:1/app (collection turnstile_locks)");
            assertThatThrownBy(() -> store.tryAcquire(new AcquireRequest("x", "o", "t", Duration.ofSeconds(1))))
                    .isInstanceOf(StoreUnavailableException.class).satisfies(e -> assertThat(e.getMessage()).doesNotContain(secret));
        }
    }

    @Test
    void optionsOfTheDriverAndOfTurnstileBothApply() {
        try (LockStore store = LockStores.open(MongoTestServer.url() + "?w=1&turnstile.collection=other_locks&appName=x")) {
            assertThat(store.description()).endsWith("(collection other_locks)");
            assertThat(store.tryAcquire(new AcquireRequest("opt-" + System.nanoTime(), "o", "t", Duration.ofSeconds(5)))).isPresent();
        }
        assertThat(LockStores.factoryFor("MONGODB+SRV://cluster0.example.net/app")).isInstanceOf(MongoLockStoreFactory.class);
    }

    /**
     * An acquire that finds no server is followed by the core's undo of its token: that undo must
     * not wait a second timeout (before: 12.6 s for `turnstile run` with the default 5 s).
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "mongodb://127.0.0.1:1/app?turnstile.timeout=2s                 | connection refused by 127.0.0.1:1",
        "mongodb://no-such-host.invalid:27017/app?turnstile.timeout=2s  | unknown host no-such-host.invalid",
        "mongodb://127.0.0.1:6379/app?turnstile.timeout=2s              | 127.0.0.1:6379",
        "SILENT                                                         | did not answer in time",
    })
    void anUnreachableServerCostsOneTimeoutAndSaysWhyInOneLine(String url, String cause) throws Exception {
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
                LockStore store = LockStores.open(url.equals("SILENT")
                        ? "mongodb://127.0.0.1:" + silent.getLocalPort() + "/app?turnstile.timeout=2s" : url);
                dev.turnstile.Turnstile turnstile = dev.turnstile.Turnstile.builder(store).build()) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> turnstile.tryAcquire("unreachable", dev.turnstile.LockOptions.defaults()))
                    .isInstanceOf(StoreUnavailableException.class).hasMessageContaining(cause)
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("Client view of cluster state").doesNotContain("\n"));
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("the 2 s timeout, once").isLessThan(Duration.ofMillis(3500));
        }
    }

    /** Attack finding 15: the driver quotes the characters after a bad '%'; they are a piece of the password. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "mongodb://u:Xy%Q7secret@127.0.0.1:1/db | Q7",
        "mongodb://us%Q7er:pw@127.0.0.1:1/db    | Q7",
        "mongodb://u:secret%@127.0.0.1:1/db     | secret",
        "mongodb://u:secret%4@127.0.0.1:1/db    | secret%4",
        "mongodb://u:ab%G1cd@h1,h2/db           | G1",
    })
    void aBadEscapeInTheUserInfoIsRefusedWithoutEchoingIt(String url, String piece) {
        assertThatThrownBy(() -> LockStores.open(url)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("the user info (user:password before '@') holds a '%' that is not a percent escape")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(piece).doesNotContain("secret").doesNotContain("Xy"));
    }

    /**
     * Attack finding 14: a host that drops the connection attempt (a firewall; here a listener whose
     * backlog is full) is not said to have accepted the connection.
     */
    @Test
    void aConnectionNobodyAcceptsIsNotCalledAccepted() throws Exception {
        java.util.List<java.net.Socket> fill = new java.util.ArrayList<>();
        try (java.net.ServerSocket blackhole = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            for (int i = 0; i < 8; i++) {
                java.net.Socket s = new java.net.Socket();
                try {
                    s.connect(blackhole.getLocalSocketAddress(), 200);
                    fill.add(s);
                } catch (java.io.IOException full) {
                    s.close();
                    break; // the backlog is full: later connection attempts are dropped
                }
            }
            try (LockStore store = LockStores.open("mongodb://127.0.0.1:" + blackhole.getLocalPort() + "/app?turnstile.timeout=1s")) {
                assertThatThrownBy(store::heldLocks).isInstanceOf(StoreUnavailableException.class)
                        .hasMessageContaining("no answer from 127.0.0.1:" + blackhole.getLocalPort() + " to a connection attempt "
                                + "(a firewall, or the host is down)")
                        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("accepted"));
            }
        } finally {
            for (java.net.Socket s : fill) {
                s.close();
            }
        }
    }

    /** Attack report, cosmetic: a refusal or an unknown host is final; it is reported at once, not after the 5 s timeout. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "mongodb://127.0.0.1:1/app                           | connection refused by 127.0.0.1:1",
        "mongodb://no-such-host.invalid:27017/app            | unknown host no-such-host.invalid",
        "mongodb://127.0.0.1:1,no-such-host.invalid:27017/app | unknown host no-such-host.invalid",
        "mongodb://no-such-host.invalid:27017,127.0.0.1:1/app | connection refused by 127.0.0.1:1",
    })
    void aRefusalIsReportedAtOnce(String url, String cause) {
        try (LockStore store = LockStores.open(url); dev.turnstile.Turnstile turnstile = dev.turnstile.Turnstile.builder(store).build()) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> turnstile.tryAcquire("refused", dev.turnstile.LockOptions.defaults()))
                    .isInstanceOf(StoreUnavailableException.class).hasMessageContaining(cause);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not the 5 s timeout").isLessThan(Duration.ofMillis(1500));
        }
    }

    @Test
    void anUnreachableServerIsUnavailableWithinTheTimeout() {
        try (LockStore store = LockStores.open("mongodb://127.0.0.1:1/app?turnstile.timeout=1s")) {
            long start = System.nanoTime();
            assertThatThrownBy(store::heldLocks).isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("mongodb://127.0.0.1:1/app");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        }
    }

    /**
     * Failing at once on a refusal is for a store that has not reached a server yet. After that, a
     * refusal is a restart, and the driver's record of it can be a heartbeat (10 s) old: a call once
     * the server is back must reach it, not fail on the stale record.
     */
    @Test
    void aServerBackFromARestartIsReachedAtOnce() throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        de.bwaldvogel.mongo.MongoServer server = new de.bwaldvogel.mongo.MongoServer(new de.bwaldvogel.mongo.backend.memory.MemoryBackend());
        server.bind("127.0.0.1", port);
        try (LockStore store = LockStores.open("mongodb://127.0.0.1:" + port + "/app?turnstile.timeout=5s")) {
            assertThat(store.heldLocks()).isEmpty();
            server.shutdownNow();
            Thread.sleep(300);
            assertThatThrownBy(store::heldLocks).isInstanceOf(StoreUnavailableException.class); // down: the driver sees it
            server = new de.bwaldvogel.mongo.MongoServer(new de.bwaldvogel.mongo.backend.memory.MemoryBackend());
            server.bind("127.0.0.1", port);
            long back = System.nanoTime();
            assertThat(store.heldLocks()).isEmpty();
            assertThat(Duration.ofNanos(System.nanoTime() - back)).as("reached once back, not after a heartbeat")
                    .isLessThan(Duration.ofSeconds(3));
        } finally {
            server.shutdownNow();
        }
    }
}
