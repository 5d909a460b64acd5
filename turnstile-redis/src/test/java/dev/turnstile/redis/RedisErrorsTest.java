package dev.turnstile.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Issue 23's Redis errors, on the machine's real Redis (6379) and PostgreSQL (5432): the driver says
 * "Unable to connect" for all of them; the message must say the cause first.
 */
class RedisErrorsTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "redis://127.0.0.1:6379/99                                   | that database number does not exist",
        "redis://127.0.0.1:5432?turnstile.timeout=2s                 | not a Redis server (wrong port?)",
        "redis://127.0.0.1:1                                         | connection refused: is Redis running",
        "redis://no-such-host.invalid:6379                           | unknown host",
        "SILENT                                                      | did not answer within turnstile.connectTimeout",
        "redis-sentinel://127.0.0.1:6379?turnstile.timeout=1s#mymaster | no Sentinel answered SENTINEL MASTER",
    })
    void eachConnectFailureSaysItsCause(String url, String cause) throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                LockStore store = LockStores.open(url.equals("SILENT")
                        ? "redis://127.0.0.1:" + silent.getLocalPort() + "?turnstile.connectTimeout=1s" : url)) {
            assertThatThrownBy(store::heldLocks).isInstanceOf(StoreUnavailableException.class).hasMessageContaining(cause);
        }
    }

    private static RedisServers servers;
    private static RedisServers.Node passworded;

    @BeforeAll
    static void startServers() {
        servers = new RedisServers();
        passworded = servers.server("--requirepass", "goodpw");
    }

    @AfterAll
    static void stopServers() {
        servers.close();
    }

    /**
     * Attack finding 2: an acquire (so {@code turnstile run}) names the connect's cause as
     * {@code locks} does, on standalone, Sentinel and Redlock; so do the calls right after, which
     * meet the remembered failure instead of connecting again.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "redis://127.0.0.1:6379/99                                      | that database number does not exist",
        "redis://127.0.0.1:1                                            | connection refused",
        "redis://:bad@127.0.0.1:PASSWORDED                              | authentication failed",
        "redis://127.0.0.1:PASSWORDED                                   | authentication failed",
        "redis://no-such-host.invalid:6379                              | unknown host",
        "redis-sentinel://127.0.0.1:6379?turnstile.timeout=1s#mymaster  | no Sentinel answered SENTINEL MASTER",
        "redlock://:bad@127.0.0.1:PASSWORDED,localhost:PASSWORDED,[::1]:PASSWORDED | authentication failed",
    })
    void anAcquireNamesTheConnectCauseAndSoDoTheCallsAfterIt(String url, String cause) throws Exception {
        try (LockStore store = LockStores.open(url.replace("PASSWORDED", Integer.toString(passworded.port)))) {
            Turnstile turnstile = Turnstile.builder(store).build();
            LockOptions options = LockOptions.lockAtMostFor(Duration.ofSeconds(30));
            for (int i = 0; i < 2; i++) {
                assertThatThrownBy(() -> turnstile.tryAcquire("errors-" + cause.length(), options))
                        .as("attempt %d", i + 1).isInstanceOf(StoreUnavailableException.class).hasMessageContaining(cause);
            }
            assertThatThrownBy(() -> store.release("errors", "t", Duration.ZERO)).hasMessageContaining(cause);
            assertThatThrownBy(() -> store.extend("errors", "t", Duration.ofSeconds(5))).hasMessageContaining(cause);
            assertThatThrownBy(store::heldLocks).hasMessageContaining(cause);
        }
    }

    /**
     * The cause is read from exception types and the server's reply, never from text that quotes
     * the host: a host named after a login error is an unknown host (attack finding 12).
     */
    @org.junit.jupiter.api.Test
    void theCauseIsReadFromTheServersReplyAndTheExceptionTypes() {
        assertThat(RedisErrors.cause(new io.lettuce.core.RedisConnectionException("Unable to connect to h:1",
                new io.lettuce.core.RedisCommandExecutionException("WRONGPASS invalid username-password pair"))))
                .contains("authentication failed");
        assertThat(RedisErrors.cause(new io.lettuce.core.RedisConnectionException("Unable to connect to wrongpass.example:1",
                new java.net.UnknownHostException("wrongpass.example")))).contains("unknown host");
        assertThat(RedisErrors.cause(new io.lettuce.core.RedisException("ERR something new, noauth wrongpass"))).isNull();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"redis://redis-noauth.invalid:6379", "redis://wrongpass-db-index-is-out-of-range.invalid:6379",
        "redis-sentinel://noauth.invalid:26379#m"})
    void anUnknownHostWhoseNameLooksLikeAnErrorIsAnUnknownHost(String url) throws Exception {
        for (int i = 0; i < 2; i++) { // the second lookup meets the JDK's cache, whose message is only the host
            try (LockStore store = LockStores.open(url)) {
                assertThatThrownBy(store::heldLocks).hasMessageContaining("unknown host")
                        .hasMessageNotContaining("authentication").hasMessageNotContaining("database number");
                assertThatThrownBy(() -> Turnstile.builder(store).build().tryAcquire("k", LockOptions.lockAtMostFor(Duration.ofSeconds(5))))
                        .hasMessageContaining("unknown host").hasMessageNotContaining("authentication");
            }
        }
    }

    /**
     * Attack finding 3: a Sentinel address that accepts and never answers costs about the connect
     * timeout (each Sentinel's URI kept Lettuce's 60 s), says so, and the description has no stray '?'.
     */
    @org.junit.jupiter.api.Test
    void aSilentSentinelCostsTheConnectTimeoutAndSaysSo() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                LockStore store = LockStores.open("redis-sentinel://127.0.0.1:" + silent.getLocalPort()
                        + "?turnstile.connectTimeout=1s#mymaster")) {
            assertThat(store.description()).isEqualTo("redis-sentinel://127.0.0.1:" + silent.getLocalPort()
                    + "#mymaster (prefix turnstile:)");
            long start = System.nanoTime();
            assertThatThrownBy(store::heldLocks).isInstanceOf(StoreUnavailableException.class)
                    .hasMessageContaining("the Sentinel accepted the connection but did not answer within turnstile.connectTimeout");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(2500));
        }
        try (LockStore refused = LockStores.open("redis-sentinel://127.0.0.1:1#mymaster")) {
            assertThatThrownBy(refused::heldLocks).hasMessageContaining("connection refused: is a Sentinel running");
        }
    }

    /**
     * Attack finding 13: a firewalled port (the connect times out), a server that answers
     * something other than Redis, and rediss:// to a plain Redis each get a cause.
     */
    @org.junit.jupiter.api.Test
    void aFirewallANonRedisServerAndTlsToAPlainRedisAreNamed() throws Exception {
        try (ServerSocket full = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            // A backlog that nobody accepts from, filled: the kernel drops further SYNs, as a firewall does.
            java.util.List<java.net.Socket> filling = new java.util.ArrayList<>();
            try {
                for (int i = 0; i < 8; i++) {
                    java.net.Socket s = new java.net.Socket();
                    filling.add(s);
                    s.connect(full.getLocalSocketAddress(), 300);
                }
            } catch (java.net.SocketTimeoutException dropped) {
                // full now
            }
            try (LockStore store = LockStores.open("redis://127.0.0.1:" + full.getLocalPort() + "?turnstile.connectTimeout=1s")) {
                assertThatThrownBy(store::heldLocks).hasMessageContaining("no answer to the connection attempt within "
                        + "turnstile.connectTimeout: a firewall drops it");
                assertThatThrownBy(() -> Turnstile.builder(store).build().tryAcquire("k", LockOptions.lockAtMostFor(Duration.ofSeconds(5))))
                        .hasMessageContaining("a firewall drops it");
            } finally {
                for (java.net.Socket s : filling) {
                    s.close();
                }
            }
        }
        try (ServerSocket http = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread answering = new Thread(() -> {
                try {
                    while (true) {
                        try (java.net.Socket s = http.accept()) {
                            s.getOutputStream().write("HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                            s.getInputStream().read();
                        }
                    }
                } catch (java.io.IOException closed) {
                    // the test is over
                }
            });
            answering.setDaemon(true);
            answering.start();
            try (LockStore store = LockStores.open("redis://127.0.0.1:" + http.getLocalPort() + "?turnstile.connectTimeout=1s")) {
                assertThatThrownBy(store::heldLocks).hasMessageContaining("the server answered something other than Redis");
            }
        }
        try (LockStore store = LockStores.open("rediss://127.0.0.1:6379?turnstile.connectTimeout=1s")) {
            assertThatThrownBy(store::heldLocks).hasMessageContaining("is the server a plain Redis without TLS? Then use redis://");
        }
    }

    /** Attack finding 16: an empty, zero, signed or non-ASCII port is refused in every URL form, not read as 6379. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "redis://127.0.0.1:                             | is empty",
        "redis://:pw@127.0.0.1:0                        | port '0'",
        "redis://127.0.0.1:+6379                        | port '+6379'",
        "redis://127.0.0.1:\u0666\u0663\u0667\u0669  | is not a port",
        "redis://[::1]:                                 | is empty",
        "redis://[::1]:0/2                              | port '0'",
        "rediss://127.0.0.1:?turnstile.timeout=1s       | is empty",
        "redis-sentinel://127.0.0.1:26379,127.0.0.1:#m  | is empty",
        "redis-sentinel://127.0.0.1:0#m                 | port '0'",
        "redis-cluster://127.0.0.1:7000,127.0.0.1:      | is empty",
        "redis-cluster://127.0.0.1:+7000                | port '+7000'",
        "redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:   | is empty",
        "redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:0  | port '0'",
    })
    void aPortThatIsNotOneTo65535IsRefused(String url, String message) {
        assertThatThrownBy(() -> LockStores.open(url)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message)
                .hasMessageContaining("port").hasMessageNotContaining("IPv6").hasMessageNotContaining("pw");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "redis://127.0.0.1:6379?turnstile.connectTimeout=999999999s | turnstile.connectTimeout=999999999s in the store URL is out of range: give 1ms to 1d",
        "redis://127.0.0.1:6379?turnstile.timeout=0s                | turnstile.timeout=0s in the store URL is out of range: give 1ms to 1d",
        "redlock://127.0.0.1:6379,127.0.0.1:6380,127.0.0.1:6381?turnstile.nodeTimeout=2d | turnstile.nodeTimeout=2d",
    })
    void durationOptionsOutsideTheirRangeAreRefusedNamingOptionAndRange(String url, String message) {
        assertThatThrownBy(() -> LockStores.open(url)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }

    /**
     * Issue 23 item 9: a password given to a server whose user has none is accepted by Redis 6+
     * (a nopass user takes any password). The store asks the server with ACL GETUSER (no failed
     * login is logged) and warns; a user with a password is not reported.
     */
    @org.junit.jupiter.api.Test
    void aPasswordTheServerDoesNotCheckIsFound() {
        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create("redis://127.0.0.1:6379");
        try (var connection = client.connect()) {
            var redis = connection.sync();
            assertThat(RedisErrors.acceptsAnyPassword(redis, "default")).isTrue();
            redis.aclSetuser("turnstile_pw_test", io.lettuce.core.AclSetuserArgs.Builder.on().addPassword("s3cret").allKeys()
                    .allCommands());
            try {
                assertThat(RedisErrors.acceptsAnyPassword(redis, "turnstile_pw_test")).isFalse();
            } finally {
                redis.aclDeluser("turnstile_pw_test");
            }
            assertThat(RedisErrors.acceptsAnyPassword(redis, "no_such_user")).isFalse();
        } finally {
            client.shutdown();
        }
        assertThat(RedisLockStoreFactory.passwordUser("")).isEmpty();
        assertThat(RedisLockStoreFactory.passwordUser("pw@")).contains("default");
        assertThat(RedisLockStoreFactory.passwordUser(":pw@")).contains("default");
        assertThat(RedisLockStoreFactory.passwordUser("al%40ice:pw@")).contains("al@ice");
        assertThat(RedisLockStoreFactory.passwordUser("alice:@")).isEmpty();
    }

    /**
     * Attack report, cosmetic: a named user is never asked about (ACL GETUSER), so one without ACL
     * permission leaves no "command denied" entry in ACL LOG; a user without INFO is told which
     * permission to grant, and works with an explicit turnstile.replicaAcks.
     */
    @org.junit.jupiter.api.Test
    void restrictedUsersLeaveNoAclLogEntryAndAreToldWhichPermissionToGrant() throws Exception {
        io.lettuce.core.RedisClient admin = io.lettuce.core.RedisClient.create("redis://:goodpw@127.0.0.1:" + passworded.port);
        try (var connection = admin.connect()) {
            var redis = connection.sync();
            redis.aclSetuser("no_acl", io.lettuce.core.AclSetuserArgs.Builder.on().addPassword("pw1").allKeys().allChannels()
                    .allCommands().removeCategory(io.lettuce.core.AclCategory.ADMIN));
            redis.aclSetuser("no_info", io.lettuce.core.AclSetuserArgs.Builder.on().addPassword("pw2").allKeys().allChannels()
                    .allCommands().removeCategory(io.lettuce.core.AclCategory.ADMIN)
                    .removeCategory(io.lettuce.core.AclCategory.DANGEROUS));
            redis.aclLogReset();
            try (LockStore store = LockStores.open("redis://no_acl:pw1@127.0.0.1:" + passworded.port)) {
                assertThat(store.heldLocks()).isNotNull();
            }
            assertThat(redis.aclLog()).as("ACL LOG").isEmpty();
            try (LockStore store = LockStores.open("redis://no_info:pw2@127.0.0.1:" + passworded.port)) {
                assertThatThrownBy(store::heldLocks).hasMessageContaining("the Redis user may not run INFO")
                        .hasMessageContaining("ACL SETUSER <user> +info").hasMessageNotContaining("pw2");
                assertThatThrownBy(() -> Turnstile.builder(store).build().tryAcquire("k", LockOptions.lockAtMostFor(Duration.ofSeconds(5))))
                        .hasMessageContaining("+info");
            }
            try (LockStore store = LockStores.open("redis://no_info:pw2@127.0.0.1:" + passworded.port + "?turnstile.replicaAcks=0")) {
                Turnstile turnstile = Turnstile.builder(store).build();
                turnstile.tryAcquire("k", LockOptions.lockAtMostFor(Duration.ofSeconds(5))).orElseThrow().release();
            }
        } finally {
            admin.shutdown();
        }
    }

    /** A store opened with an unchecked password still works (a rollout sets client passwords first). */
    @org.junit.jupiter.api.Test
    void aStoreWithAnUncheckedPasswordStillWorks() throws Exception {
        try (LockStore store = LockStores.open("redis://:not-checked@127.0.0.1:6379")) {
            assertThat(store.heldLocks()).isNotNull();
        }
    }
}
