package dev.turnstile.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.testing.InMemoryLockStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The standalone server over real sockets: the DNS-rebinding guard, the sign-in, the session and
 * its CSRF token, the limits on what a request may send, and the headers on every answer.
 */
class ConsoleServerTest {
    private static final String TOKEN = "correct-horse-battery-staple-0123456789";

    private final InMemoryLockStore store = new InMemoryLockStore();
    private final Turnstile turnstile = Turnstile.builder(store).build();
    private @Nullable ConsoleServer server;

    @AfterEach
    void close() {
        if (server != null) {
            server.close();
        }
        turnstile.close();
        store.close();
    }

    private ConsoleServer start(boolean actions, @Nullable String token) {
        Console console = Console.builder(turnstile).actionsEnabled(actions, "use --allow-release.").build();
        ConsoleServer.Builder b = ConsoleServer.builder(console).listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        if (token != null) {
            b.token(token);
        }
        server = b.start();
        return server;
    }

    record Response(int status, String head, String body) {
        @Nullable String header(String name) {
            Matcher m = Pattern.compile("(?im)^" + Pattern.quote(name) + ":\\s*(.*?)\\r?$").matcher(head);
            return m.find() ? m.group(1) : null;
        }
    }

    /** One HTTP/1.1 request on its own connection, written by hand so that Host and every header are ours. */
    private static Response send(ConsoleServer s, String method, String path, @Nullable String host, String extraHeaders,
            @Nullable String body) throws IOException {
        try (Socket socket = new Socket(s.address().getAddress(), s.address().getPort())) {
            socket.setSoTimeout(10_000);
            byte[] b = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
            String req = method + " " + path + " HTTP/1.1\r\n" + (host != null ? "Host: " + host + "\r\n" : "")
                    + "Connection: close\r\n" + extraHeaders
                    + (body != null ? "Content-Length: " + b.length + "\r\n" : "") + "\r\n";
            OutputStream out = socket.getOutputStream();
            out.write(req.getBytes(StandardCharsets.ISO_8859_1));
            out.write(b);
            out.flush();
            InputStream in = socket.getInputStream();
            String all = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            int split = all.indexOf("\r\n\r\n");
            String head = split < 0 ? all : all.substring(0, split);
            int status = Integer.parseInt(head.substring(9, 12));
            return new Response(status, head, split < 0 ? "" : all.substring(split + 4));
        }
    }

    private static String host(ConsoleServer s) {
        return "127.0.0.1:" + s.address().getPort();
    }

    private static String form(String... kv) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < kv.length; i += 2) {
            b.append(b.length() > 0 ? "&" : "").append(URLEncoder.encode(kv[i], StandardCharsets.UTF_8)).append('=')
                    .append(URLEncoder.encode(kv[i + 1], StandardCharsets.UTF_8));
        }
        return b.toString();
    }

    private static final String FORM = "Content-Type: application/x-www-form-urlencoded\r\n";

    @Test
    void servesTheLocksPageWithSecurityHeadersToItsOwnHostOnly() throws IOException {
        ConsoleServer s = start(false, null);
        turnstile.tryAcquire("nightly", LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow();
        Response ok = send(s, "GET", "/", host(s), "", null);
        assertThat(ok.status()).isEqualTo(200);
        assertThat(ok.body()).contains("nightly");
        assertThat(ok.header("Content-Security-Policy")).contains("script-src 'self'").contains("frame-ancestors 'none'");
        assertThat(ok.header("X-Frame-Options")).isEqualTo("DENY");
        assertThat(ok.header("X-Content-Type-Options")).isEqualTo("nosniff");
        assertThat(ok.header("Cache-Control")).isEqualTo("no-store");
        assertThat(send(s, "GET", "/", "localhost:" + s.address().getPort(), "", null).status()).isEqualTo(200);
        // DNS rebinding: a page on evil.example whose name now points at 127.0.0.1
        Response rebound = send(s, "GET", "/", "evil.example:" + s.address().getPort(), "", null);
        assertThat(rebound.status()).isEqualTo(421);
        assertThat(rebound.body()).contains("DNS rebinding").doesNotContain("nightly");
        assertThat(send(s, "GET", "/", null, "", null).status()).isIn(400, 421);
        assertThat(send(s, "GET", "/static/console.js", host(s), "", null).header("Content-Type")).startsWith("text/javascript");
    }

    @Test
    void actionsNeedASignInWithTheTokenAndTheSessionsCsrfToken() throws Exception {
        ConsoleServer s = start(true, TOKEN);
        Lease lease = turnstile.tryAcquire("payments", LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow();
        String fence = Long.toString(lease.fence());
        // not signed in: the confirmation sends to the sign-in, the action is refused
        Response confirm = send(s, "GET", "/release?name=payments", host(s), "", null);
        assertThat(confirm.status()).isEqualTo(303);
        assertThat(confirm.header("Location")).isEqualTo("/login");
        Response claimConfirm = send(s, "GET", "/claims/release?table=t&key=k&version=1", host(s), "", null);
        assertThat(claimConfirm.header("Location")).as("a claim's release page needs the sign-in too").isEqualTo("/login");
        Response anonymous = send(s, "POST", "/release", host(s), FORM, form("name", "payments", "fence", fence, "csrf", "x"));
        assertThat(anonymous.status()).isEqualTo(403);
        // a wrong token
        Response wrong = send(s, "POST", "/login", host(s), FORM, form("token", TOKEN + "x"));
        assertThat(wrong.status()).isEqualTo(403);
        assertThat(wrong.header("Set-Cookie")).isNull();
        // a sign-in from another site's form
        Response crossSite = send(s, "POST", "/login", host(s), FORM + "Origin: https://evil.example\r\n", form("token", TOKEN));
        assertThat(crossSite.status()).isEqualTo(403);
        // the right token
        Response in = send(s, "POST", "/login", host(s), FORM + "Origin: http://" + host(s) + "\r\n", form("token", TOKEN));
        assertThat(in.status()).isEqualTo(303);
        String setCookie = in.header("Set-Cookie");
        assertThat(setCookie).contains("HttpOnly").contains("SameSite=Strict");
        String cookie = "Cookie: " + setCookie.substring(0, setCookie.indexOf(';')) + "\r\n";
        Response page = send(s, "GET", "/release?name=payments", host(s), cookie, null);
        assertThat(page.status()).isEqualTo(200);
        Matcher csrf = Pattern.compile("name=\"csrf\" value=\"([^\"]+)\"").matcher(page.body());
        assertThat(csrf.find()).isTrue();
        // signed in, but without the session's CSRF token: refused
        assertThat(send(s, "POST", "/release", host(s), FORM + cookie, form("name", "payments", "fence", fence, "csrf", "x"))
                .status()).isEqualTo(403);
        assertThat(lease.isHeld()).isTrue();
        // another session's CSRF token with this cookie: refused
        Response other = send(s, "POST", "/login", host(s), FORM, form("token", TOKEN));
        String otherCookie = "Cookie: " + other.header("Set-Cookie").split(";", -1)[0] + "\r\n";
        assertThat(send(s, "POST", "/release", host(s), FORM + otherCookie, form("name", "payments", "fence", fence,
                "csrf", csrf.group(1))).status()).isEqualTo(403);
        assertThat(store.heldLocks()).hasSize(1);
        // everything right
        Response done = send(s, "POST", "/release", host(s), FORM + cookie + "Origin: http://" + host(s) + "\r\n",
                form("name", "payments", "fence", fence, "csrf", csrf.group(1)));
        assertThat(done.status()).isEqualTo(303);
        assertThat(store.heldLocks()).isEmpty();
        assertThat(send(s, "GET", "/history", host(s), cookie, null).body()).contains("payments").contains("token holder");
        // signed out: the cookie is worth nothing
        assertThat(send(s, "POST", "/logout", host(s), FORM + cookie, "").status()).isEqualTo(303);
        assertThat(send(s, "GET", "/release?name=payments", host(s), cookie, null).status()).isEqualTo(303);
    }

    @Test
    void wrongTokensAreLimitedPerAddressWithoutHoldingAWorker() throws IOException {
        ConsoleServer s = start(true, TOKEN);
        long started = System.nanoTime();
        for (int i = 0; i < ConsoleServer.SIGN_IN_TRIES_PER_MINUTE; i++) {
            assertThat(send(s, "POST", "/login", host(s), FORM, form("token", "wrong-" + i)).status()).isEqualTo(403);
        }
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("no sleep per wrong token").isLessThan(Duration.ofSeconds(4));
        Response limited = send(s, "POST", "/login", host(s), FORM, form("token", TOKEN));
        assertThat(limited.status()).as("even the right token waits once the minute is used up").isEqualTo(429);
        assertThat(limited.header("Retry-After")).isEqualTo("60");
        assertThat(limited.header("Set-Cookie")).isNull();
    }

    @Test
    void behindAProxyOrTunnelThePublicUrlIsAcceptedAndNothingElse() throws IOException {
        Console console = Console.builder(turnstile).actionsEnabled(true, "x").build();
        server = ConsoleServer.builder(console).listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .token(TOKEN).publicUrl("https://Locks.Example.com").start();
        ConsoleServer s = server;
        assertThat(s.url()).isEqualTo("https://Locks.Example.com/");
        // a TLS proxy that passes the public Host, and one that passes the upstream's
        for (String host : new String[] {"locks.example.com", host(s)}) {
            Response in = send(s, "POST", "/login", host, FORM + "Origin: https://locks.example.com\r\n", form("token", TOKEN));
            assertThat(in.status()).as(host).isEqualTo(303);
        }
        assertThat(send(s, "POST", "/login", host(s), FORM + "Origin: http://locks.example.com\r\n", form("token", TOKEN))
                .status()).as("another scheme is another origin").isEqualTo(403);
        assertThat(send(s, "GET", "/", "other.example.com", "", null).status()).isEqualTo(421);
        for (String bad : new String[] {"ftp://x", "https://", "https://user:pw@x", "https://x/path", "https://x?q", "x", "",
                "https://x#f", "javascript:alert(1)"}) {
            assertThatThrownBy(() -> ConsoleServer.builder(console).publicUrl(bad)).as(bad)
                    .hasMessageContaining("is not an http or https URL of a host");
        }
        assertThatThrownBy(() -> ConsoleServer.builder(console).publicUrl(null)).hasMessageContaining("null");
    }

    @Test
    void refusesOversizedAndNonFormBodies() throws IOException {
        ConsoleServer s = start(true, TOKEN);
        Response big = send(s, "POST", "/login", host(s), FORM, "token=" + "a".repeat(ConsoleServer.MAX_BODY));
        assertThat(big.status()).isEqualTo(413);
        Response json = send(s, "POST", "/release", host(s), "Content-Type: application/json\r\n", "{}");
        assertThat(json.status()).isEqualTo(415);
    }

    @Test
    void aReadOnlyConsoleHasNoSignIn() throws IOException {
        ConsoleServer s = start(false, null);
        Response login = send(s, "GET", "/login", host(s), "", null);
        assertThat(login.status()).isEqualTo(404);
        assertThat(login.body()).contains("read-only").contains("--allow-release");
        assertThat(send(s, "GET", "/release?name=x", host(s), "", null).status()).isEqualTo(403);
    }

    @Test
    void refusesToStartUnsafely() {
        Console withActions = Console.builder(turnstile).actionsEnabled(true, "x").build();
        assertThatThrownBy(() -> ConsoleServer.builder(withActions).listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .start()).hasMessageContaining("needs a token");
        Console readOnly = Console.builder(turnstile).build();
        assertThatThrownBy(() -> ConsoleServer.builder(readOnly).listen(new InetSocketAddress(0)).start())
                .hasMessageContaining("beyond loopback, needs a token");
        assertThatThrownBy(() -> ConsoleServer.builder(readOnly).token("short")).hasMessageContaining("at least 16");
        assertThatThrownBy(() -> ConsoleServer.builder(readOnly).token(" " + TOKEN)).hasMessageContaining("white space");
    }

    @Test
    void beyondLoopbackEveryPageNeedsASignIn() throws IOException {
        Console console = Console.builder(turnstile).build();
        server = ConsoleServer.builder(console).listen(new InetSocketAddress(0)).token(TOKEN).start();
        String host = "127.0.0.1:" + server.address().getPort();
        Response page = send(server, "GET", "/", host, "", null);
        assertThat(page.status()).isEqualTo(303);
        assertThat(page.header("Location")).isEqualTo("/login");
        Response in = send(server, "POST", "/login", host, FORM, form("token", TOKEN));
        String cookie = "Cookie: " + in.header("Set-Cookie").split(";", -1)[0] + "\r\n";
        assertThat(send(server, "GET", "/", host, cookie, null).status()).isEqualTo(200);
    }
}
