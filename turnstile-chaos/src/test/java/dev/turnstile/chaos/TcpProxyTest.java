package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The proxy in front of an echo server: pass-through, delay, blackhole and heal. */
class TcpProxyTest {
    ServerSocket echo;
    TcpProxy proxy;

    @BeforeEach
    void start() throws Exception {
        echo = new ServerSocket(0, 10, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> {
            while (!echo.isClosed()) {
                try {
                    Socket s = echo.accept();
                    Thread c = new Thread(() -> {
                        try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                            in.transferTo(out);
                        } catch (Exception ignored) {
                            // closed
                        }
                    });
                    c.setDaemon(true);
                    c.start();
                } catch (Exception e) {
                    return;
                }
            }
        });
        t.setDaemon(true);
        t.start();
        proxy = new TcpProxy("127.0.0.1", echo.getLocalPort());
    }

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        echo.close();
    }

    static long roundTripMillis(Socket s, byte b) throws Exception {
        long t0 = System.nanoTime();
        s.getOutputStream().write(b);
        assertThat(s.getInputStream().read()).isEqualTo(b & 0xff);
        return Duration.ofNanos(System.nanoTime() - t0).toMillis();
    }

    @Test
    void relaysDelaysBlackholesAndHeals() throws Exception {
        try (Socket s = new Socket("127.0.0.1", proxy.port())) {
            s.setSoTimeout(3000);
            assertThat(roundTripMillis(s, (byte) 1)).isLessThan(200);

            proxy.delay(Duration.ofMillis(100));
            assertThat(roundTripMillis(s, (byte) 2)).isBetween(195L, 1500L);

            proxy.blackhole();
            s.setSoTimeout(400);
            s.getOutputStream().write(3);
            assertThatThrownBy(() -> s.getInputStream().read()).as("bytes stop, socket stays open")
                    .isInstanceOf(SocketTimeoutException.class);
            assertThat(s.isClosed()).isFalse();

            proxy.heal();
            s.setSoTimeout(3000);
            assertThat(s.getInputStream().read()).as("the held byte arrives after the heal").isEqualTo(3);
            assertThat(roundTripMillis(s, (byte) 4)).isLessThan(200);
        }
    }

    @Test
    void newConnectionsDuringABlackholeCarryNothingUntilHealed() throws Exception {
        proxy.blackhole();
        try (Socket s = new Socket("127.0.0.1", proxy.port())) {
            s.setSoTimeout(300);
            s.getOutputStream().write(7);
            assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
            proxy.heal();
            s.setSoTimeout(3000);
            assertThat(s.getInputStream().read()).isEqualTo(7);
        }
    }
}
