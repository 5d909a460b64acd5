package dev.turnstile.jdbc;

import org.h2.tools.Server;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * H2 in server mode in this JVM, so the holder JVM shares the database and CURRENT_TIMESTAMP is
 * evaluated by the server (this JVM, whose clock is true), not by the stepped client.
 */
class H2ClockStepTest extends JdbcClockStepSupport {
    private static Server server;

    @BeforeAll
    static void startServer() throws Exception {
        server = Server.createTcpServer("-tcpPort", "0", "-tcpAllowOthers", "-ifNotExists").start();
    }

    @AfterAll
    static void stopServer() {
        server.stop();
    }

    @Override
    String jdbcUrl() {
        return "jdbc:h2:tcp://127.0.0.1:" + server.getPort() + "/mem:clockstep;DB_CLOSE_DELAY=-1";
    }
}
