package dev.turnstile.jdbc;

import org.h2.tools.Server;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** H2 in server mode, so the contender JVMs reach the same database. */
class H2LockStoreContractTest extends JdbcContractSupport {
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
        return "jdbc:h2:tcp://127.0.0.1:" + server.getPort() + "/mem:turnstile;DB_CLOSE_DELAY=-1";
    }

    @Override
    String unreachableJdbcUrl() {
        return "jdbc:h2:tcp://127.0.0.1:1/mem:nothing";
    }
}
