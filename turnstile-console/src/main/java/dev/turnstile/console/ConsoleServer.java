package dev.turnstile.console;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves a {@link Console} on the JDK's own HTTP server ({@code turnstile console}): no
 * application, no dependency. Bound to loopback by default; pages are open to whoever can reach
 * the address there, and a {@code Host} other than the bound loopback address and port is refused
 * (a web page cannot read the console through DNS rebinding). Bound elsewhere, every page needs a
 * sign-in. Actions always need one: the operator signs in with the action token on the sign-in
 * page, which sets a session cookie ({@code HttpOnly}, {@code SameSite=Strict}) and a CSRF token
 * that every action's form carries.
 *
 * <p>It turns on {@code TCP_NODELAY} for the JDK's HTTP server by setting the system property
 * {@code sun.net.httpserver.nodelay} (unless the application set it): without it a small page
 * waits 40 ms for the client's delayed acknowledgement. The JDK reads the property once, when its
 * first server in the JVM starts, and it holds for every JDK HTTP server of the JVM.
 */
public final class ConsoleServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConsoleServer.class);
    /** Form bodies are a name, a fence and a token: far below this. */
    static final int MAX_BODY = 64 * 1024;
    private static final String COOKIE_PREFIX = "turnstile_console_";
    private static final Duration SESSION_LIFE = Duration.ofHours(8);
    private static final int MAX_SESSIONS = 1000;
    private static final SecureRandom RANDOM = new SecureRandom();
    static final int WORKERS = 32;
    /** Wrong tokens a client address may try per minute before it is told to wait. */
    static final int SIGN_IN_TRIES_PER_MINUTE = 10;

    private final Console console;
    private final HttpServer server;
    private final ExecutorService executor;
    private final byte @Nullable [] tokenDigest;
    private final boolean loopback;
    private final Set<String> hosts;
    /** The origins a browser's form may come from: the console's own addresses and its public URL. */
    private final Set<String> origins;
    private final @Nullable String publicUrl;
    /** Named after the port: browsers send a host's cookies to all its ports, and two consoles must not sign each other out. */
    private final String cookie;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    /** Per client address: the start of its current minute and its wrong tokens in it. */
    private final Map<String, long[]> wrongTokens = new ConcurrentHashMap<>();

    private record Session(String csrf, long createdNanos) {}

    static {
        // The JDK server writes a response's headers and its body apart: without TCP_NODELAY a small
        // page waits for the client's delayed ACK of the headers (40 ms here, measured: a filtered
        // page of 1.7 KB took 52 ms, the full one of 205 KB 17 ms). Read once, when the JDK's server
        // is first used in this JVM; a value the application set itself is kept.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    private ConsoleServer(Builder b) throws IOException {
        this.console = b.console;
        this.tokenDigest = b.token != null ? sha256(b.token) : null;
        this.server = HttpServer.create(b.address, 64);
        InetSocketAddress bound = server.getAddress();
        this.loopback = bound.getAddress().isLoopbackAddress();
        int port = bound.getPort();
        this.cookie = COOKIE_PREFIX + port;
        java.util.Set<String> h = new java.util.HashSet<>(java.util.List.of("127.0.0.1:" + port, "localhost:" + port,
                "[::1]:" + port, hostOf(bound.getAddress()) + ":" + port));
        java.util.Set<String> o = new java.util.HashSet<>();
        h.forEach(a -> o.add("http://" + a));
        this.publicUrl = b.publicUrl;
        if (b.publicUrl != null) {
            // behind a reverse proxy or a tunnel: the browser's Host and Origin are the public ones
            java.net.URI u = java.net.URI.create(b.publicUrl);
            String authority = u.getRawAuthority().toLowerCase(Locale.ROOT);
            h.add(authority);
            o.add(u.getScheme().toLowerCase(Locale.ROOT) + "://" + authority);
        }
        this.hosts = Set.copyOf(h);
        this.origins = Set.copyOf(o);
        AtomicInteger n = new AtomicInteger();
        // A request's headers and body are read on a worker thread, so a client that sends slowly
        // holds one until the server's request time limit: enough workers that a few cannot stop it.
        this.executor = Executors.newFixedThreadPool(WORKERS, r -> {
            Thread t = new Thread(r, "turnstile-console-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/", this::exchange);
    }

    /**
     * Starts a builder.
     *
     * @param console the console to serve
     * @return a builder: loopback, port 7433, no token (so no actions)
     * @throws IllegalArgumentException if {@code console} is null
     */
    public static Builder builder(Console console) {
        if (console == null) {
            throw new IllegalArgumentException("console is null");
        }
        return new Builder(console);
    }

    /**
     * The address the server listens on (with the port chosen when port 0 was asked for).
     *
     * @return the bound address
     */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    /**
     * The console's URL, for people: {@code http://127.0.0.1:7433/}.
     *
     * @return the URL
     */
    public String url() {
        if (publicUrl != null) {
            return publicUrl.endsWith("/") ? publicUrl : publicUrl + "/";
        }
        InetSocketAddress a = server.getAddress();
        return "http://" + hostOf(a.getAddress()) + ":" + a.getPort() + "/";
    }

    /** Stops serving (requests in progress get up to one second) and its threads. */
    @Override
    public void close() {
        server.stop(1);
        executor.shutdownNow();
    }

    private static String hostOf(InetAddress a) {
        String h = a.getHostAddress();
        return h.contains(":") ? "[" + h + "]" : h;
    }

    private void exchange(HttpExchange x) throws IOException {
        try (x) {
            ConsoleResponse response;
            try {
                response = answer(x);
            } catch (RuntimeException e) {
                log.error("console: a request failed", e);
                response = new ConsoleResponse(500, "text/plain; charset=utf-8", Map.of(), "the console failed: see its log");
            }
            send(x, response);
        }
    }

    private ConsoleResponse answer(HttpExchange x) throws IOException {
        String host = x.getRequestHeaders().getFirst("Host");
        if (loopback && (host == null || !hosts.contains(host.toLowerCase(Locale.ROOT)))) {
            return plain(421, "This console answers to " + String.join(", ", new java.util.TreeSet<>(hosts))
                    + " only: a request for another host name is refused (a page elsewhere could read the console through "
                    + "DNS rebinding otherwise). Open it by its address.");
        }
        String method = x.getRequestMethod().toUpperCase(Locale.ROOT);
        String path = x.getRequestURI().getPath();
        if (path == null || path.isEmpty()) {
            path = "/";
        }
        Map<String, String> params;
        if (method.equals("POST")) {
            String type = x.getRequestHeaders().getFirst("Content-Type");
            if (type == null || !type.toLowerCase(Locale.ROOT).startsWith("application/x-www-form-urlencoded")) {
                return plain(415, "Actions are posted as HTML forms (application/x-www-form-urlencoded).");
            }
            String body = readBody(x.getRequestBody());
            if (body == null) {
                return plain(413, "The form is larger than " + MAX_BODY + " bytes: a console form is far smaller.");
            }
            params = parse(body);
        } else {
            params = parse(x.getRequestURI().getRawQuery());
        }
        String remote = x.getRemoteAddress().getAddress().getHostAddress();
        String origin = x.getRequestHeaders().getFirst("Origin");
        Session session = session(x.getRequestHeaders().getFirst("Cookie"));
        String fetchSite = x.getRequestHeaders().getFirst("Sec-Fetch-Site");
        if (method.equals("POST") && fetchSite != null && !fetchSite.equals("same-origin") && !fetchSite.equals("none")) {
            // a browser says where a request comes from: another site's form or script is refused before anything else
            return plain(403, "This request came from another site (Sec-Fetch-Site: " + fetchSite + "): the console takes "
                    + "actions from its own pages only.");
        }
        if (method.equals("POST") && origin != null && !origin.equals("null") && !origins.contains(origin.toLowerCase(Locale.ROOT))
                && !origin.equalsIgnoreCase("http://" + host)) {
            return plain(403, "This request came from another site (Origin " + Printable.of(origin) + "): the console takes "
                    + "actions from its own pages only. Behind a reverse proxy or a tunnel, start it with --public-url.");
        }
        if (path.equals("/login")) {
            return login(method, params, remote);
        }
        if (path.equals("/logout")) {
            return logout(method, session);
        }
        boolean isStatic = path.startsWith("/static/");
        boolean needsSession = !isStatic && (!loopback || path.equals("/release") || path.equals("/claims/release")) && tokenDigest != null;
        if (needsSession && session == null) {
            return method.equals("GET") || method.equals("HEAD") ? ConsoleResponse.redirect("/login")
                    : plain(403, "Sign in with the console's token first (" + url() + "login).");
        }
        // the Origin was checked above against this server's own origins (a proxy's too): not again
        ConsoleRequest request = new ConsoleRequest(method, path, params, "", session != null ? "token holder" : null,
                remote, null, host, session != null ? new ConsoleRequest.CsrfField("csrf", session.csrf()) : null, Map.of());
        return console.handle(request);
    }

    private ConsoleResponse login(String method, Map<String, String> params, String remote) {
        if (tokenDigest == null) {
            return ConsoleResponse.html(404, loginPage("This console was started without a token: it is read-only and "
                    + "nobody signs in." + (console.actionsEnabled() ? "" : " Start it with --allow-release to enable actions.")));
        }
        if (method.equals("GET") || method.equals("HEAD")) {
            return ConsoleResponse.html(200, loginPage(null));
        }
        if (!method.equals("POST")) {
            return plain(405, "Sign in with the form (GET /login, then POST).");
        }
        if (tooManyWrongTokens(remote, false)) {
            return new ConsoleResponse(429, "text/html; charset=utf-8", Map.of("Retry-After", "60"),
                    loginPage("Too many wrong tokens from " + remote + " in the last minute: wait a minute, then try again."));
        }
        String token = params.getOrDefault("token", "");
        if (!MessageDigest.isEqual(sha256(token.strip()), tokenDigest)) {
            // guessing is bounded per address without holding a worker thread; the token has 256 bits anyway
            if (tooManyWrongTokens(remote, true)) {
                log.warn("console: {} wrong tokens in a minute from {}: its sign-ins wait a minute", SIGN_IN_TRIES_PER_MINUTE,
                        remote);
            }
            return ConsoleResponse.html(403, loginPage("That is not the console's token. It was printed when the console "
                    + "started, or is the one given by TURNSTILE_CONSOLE_TOKEN or --token-file."));
        }
        prune();
        String id = random();
        sessions.put(id, new Session(random(), System.nanoTime()));
        log.info("console: signed in from {}", remote);
        return new ConsoleResponse(303, "text/plain; charset=utf-8", Map.of("Location", "/",
                "Set-Cookie", cookie + "=" + id + "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" + SESSION_LIFE.toSeconds()), "signed in");
    }

    /** Counts a wrong token ({@code count}) or only looks; true once an address has used up its minute. */
    private boolean tooManyWrongTokens(String remote, boolean count) {
        long now = System.nanoTime();
        if (wrongTokens.size() > 10_000) {
            wrongTokens.clear(); // many addresses: forget them all rather than grow
        }
        long[] window = wrongTokens.computeIfAbsent(remote, k -> new long[] {now, 0});
        synchronized (window) {
            if (now - window[0] > 60_000_000_000L) {
                window[0] = now;
                window[1] = 0;
            }
            if (count) {
                window[1]++;
                return window[1] == SIGN_IN_TRIES_PER_MINUTE;
            }
            return window[1] >= SIGN_IN_TRIES_PER_MINUTE;
        }
    }

    private ConsoleResponse logout(String method, @Nullable Session session) {
        if (!method.equals("POST")) {
            return plain(405, "Sign out with POST /logout.");
        }
        if (session != null) {
            sessions.values().remove(session);
        }
        return new ConsoleResponse(303, "text/plain; charset=utf-8", Map.of("Location", "/",
                "Set-Cookie", cookie + "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"), "signed out");
    }

    private String loginPage(@Nullable String message) {
        return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Sign in · Turnstile console</title>"
                + "<link rel=\"stylesheet\" href=\"/static/console.css\"></head><body><header><span class=\"brand\">"
                + "Turnstile console</span><nav><a href=\"/\">Locks</a></nav></header><main><h1>Sign in</h1>"
                + (message != null ? "<p class=\"message\" id=\"message\">" + Html.text(message) + "</p>" : "")
                + (tokenDigest != null ? "<form method=\"post\" action=\"/login\"><p><label>Console token: "
                        + "<input type=\"password\" name=\"token\" id=\"token\" autocomplete=\"off\" required></label> "
                        + "<button type=\"submit\" id=\"sign-in\">Sign in</button></p></form>" : "")
                + "</main></body></html>\n";
    }

    private @Nullable Session session(@Nullable String cookies) {
        if (cookies == null) {
            return null;
        }
        for (String c : cookies.split(";", -1)) {
            String kv = c.strip();
            if (kv.startsWith(cookie + "=")) {
                Session s = sessions.get(kv.substring(cookie.length() + 1));
                if (s != null && System.nanoTime() - s.createdNanos() < SESSION_LIFE.toNanos()) {
                    return s;
                }
            }
        }
        return null;
    }

    private void prune() {
        long now = System.nanoTime();
        sessions.values().removeIf(s -> now - s.createdNanos() >= SESSION_LIFE.toNanos());
        while (sessions.size() >= MAX_SESSIONS) {
            sessions.entrySet().stream().min(java.util.Comparator.comparingLong(e -> e.getValue().createdNanos()))
                    .ifPresent(e -> sessions.remove(e.getKey()));
        }
    }

    private static @Nullable String readBody(InputStream in) throws IOException {
        byte[] body = in.readNBytes(MAX_BODY + 1);
        return body.length > MAX_BODY ? null : new String(body, StandardCharsets.UTF_8);
    }

    /** {@code a=1&b=2}: the first value of each name; pieces that do not decode are left out. */
    static Map<String, String> parse(@Nullable String query) {
        Map<String, String> out = new HashMap<>();
        if (query == null || query.isEmpty()) {
            return out;
        }
        for (String pair : query.split("&", -1)) {
            int eq = pair.indexOf('=');
            try {
                String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                out.putIfAbsent(k, v);
            } catch (IllegalArgumentException e) {
                // a malformed %-escape: that parameter is as good as absent
            }
        }
        return out;
    }

    private static void send(HttpExchange x, ConsoleResponse r) throws IOException {
        byte[] body = r.body().getBytes(StandardCharsets.UTF_8);
        Console.SECURITY_HEADERS.forEach((k, v) -> x.getResponseHeaders().set(k, v));
        r.headers().forEach((k, v) -> x.getResponseHeaders().set(k, v));
        x.getResponseHeaders().set("Content-Type", r.contentType());
        boolean head = x.getRequestMethod().equalsIgnoreCase("HEAD");
        x.sendResponseHeaders(r.status(), head ? -1 : body.length == 0 ? -1 : body.length);
        if (!head && body.length > 0) {
            try (OutputStream out = x.getResponseBody()) {
                out.write(body);
            }
        }
    }

    private static ConsoleResponse plain(int status, String text) {
        return new ConsoleResponse(status, "text/plain; charset=utf-8", Map.of(), text + "\n");
    }

    private static String random() {
        byte[] b = new byte[32];
        RANDOM.nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    /**
     * A fresh action token: 256 random bits, URL-safe.
     *
     * @return the token
     */
    public static String newToken() {
        return random();
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-256", e);
        }
    }

    /** Options for a {@link ConsoleServer}. */
    public static final class Builder {
        private final Console console;
        private InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), 7433);
        private @Nullable String token;
        private @Nullable String publicUrl;

        private Builder(Console console) {
            this.console = console;
        }

        /**
         * Where to listen. Default {@code 127.0.0.1:7433}. Port 0 takes a free port ({@link #address} tells which).
         *
         * @param address the address
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder listen(InetSocketAddress address) {
            if (address == null) {
                throw new IllegalArgumentException("listen address is null: give e.g. 127.0.0.1:7433");
            }
            this.address = address;
            return this;
        }

        /**
         * The token an operator signs in with. Required when the console's actions are enabled, and
         * when listening beyond loopback.
         *
         * @param token at least 16 characters, no white space at either end
         * @return this builder
         * @throws IllegalArgumentException if shorter than 16 characters or padded with white space
         */
        public Builder token(String token) {
            if (token == null || token.length() < 16) {
                throw new IllegalArgumentException("the console token is " + (token == null ? "null" : token.length()
                        + " characters") + ": give at least 16 (ConsoleServer.newToken() makes one of 43)");
            }
            if (!token.equals(token.strip())) {
                throw new IllegalArgumentException("the console token starts or ends with white space: remove it");
            }
            this.token = token;
            return this;
        }

        /**
         * The URL browsers use when the console is reached through a reverse proxy (with TLS) or a
         * tunnel on another port: its host and port are accepted in the {@code Host} header, and
         * its origin in a form's {@code Origin}, besides the console's own loopback addresses.
         *
         * @param url e.g. {@code https://locks.example.com} or {@code http://localhost:9000}
         * @return this builder
         * @throws IllegalArgumentException if it is not an http or https URL with a host (no user info, query or fragment)
         */
        public Builder publicUrl(String url) {
            java.net.URI u;
            try {
                u = url == null ? null : new java.net.URI(url);
            } catch (java.net.URISyntaxException e) {
                u = null;
            }
            if (u == null || u.getScheme() == null || !(u.getScheme().equalsIgnoreCase("http") || u.getScheme().equalsIgnoreCase("https"))
                    || u.getHost() == null || u.getRawUserInfo() != null || u.getRawQuery() != null || u.getRawFragment() != null
                    || (u.getRawPath() != null && !u.getRawPath().isEmpty() && !u.getRawPath().equals("/"))) {
                throw new IllegalArgumentException("public URL '" + (url == null ? "null" : Printable.of(url)) + "' is not "
                        + "an http or https URL of a host (and port), e.g. https://locks.example.com: give the address "
                        + "browsers use, without a path, query or user");
            }
            this.publicUrl = u.getScheme().toLowerCase(Locale.ROOT) + "://" + u.getRawAuthority();
            return this;
        }

        /**
         * Binds the address and starts serving.
         *
         * @return the running server
         * @throws IllegalArgumentException if actions are enabled, or the address is not loopback, without a token
         * @throws UncheckedIOException if the address cannot be bound (in use, not this host's)
         */
        public ConsoleServer start() {
            boolean beyondLoopback = address.getAddress() == null || !address.getAddress().isLoopbackAddress();
            if (token == null && console.actionsEnabled()) {
                throw new IllegalArgumentException("the console's actions are enabled, so it needs a token to sign in with");
            }
            if (token == null && beyondLoopback) {
                throw new IllegalArgumentException("listening on " + address + ", beyond loopback, needs a token: every page "
                        + "then asks for a sign-in");
            }
            ConsoleServer s;
            try {
                s = new ConsoleServer(this);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot listen on " + address + " (" + e.getMessage() + ")", e);
            }
            s.server.start();
            return s;
        }
    }
}
