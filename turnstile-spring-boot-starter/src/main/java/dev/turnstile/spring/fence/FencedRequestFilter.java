package dev.turnstile.spring.fence;

import dev.turnstile.FenceGate;
import dev.turnstile.StaleFenceException;
import dev.turnstile.StoreUnavailableException;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.util.AntPathMatcher;
import org.springframework.web.util.UrlPathHelper;

/**
 * A servlet filter that admits a write request only if it carries a fence at least as high as the
 * highest fence the resource has admitted: the sender puts its lock's name in {@value #LOCK_HEADER}
 * (percent-encoded UTF-8: {@link #lockHeaderValue}) and its lease's fence in {@value #FENCE_HEADER}, and the filter runs the request through a
 * {@link FenceGate} (by default {@code SqlFences.gate} over the application's DataSource).
 *
 * <p>On the paths and methods it guards:
 *
 * <ul>
 *   <li>no {@value #LOCK_HEADER} or {@value #FENCE_HEADER}: <b>428</b> Precondition Required;
 *   <li>a fence that is not a positive whole number, or a lock name that is not valid: <b>400</b>;
 *   <li>a stale fence: <b>409</b> Conflict, with the highest admitted fence in
 *       {@value #SEEN_HEADER}; the request's handler does not run;
 *   <li>the gate's store unreachable: <b>503</b>; the handler does not run;
 *   <li>admitted: the handler runs (inside the gate: with {@code SqlFences.gate} the resource stays
 *       locked until it returns; it may not go asynchronous, see below), and finds the fence in the request attribute
 *       {@value #FENCE_ATTRIBUTE} and the lock name in {@value #LOCK_ATTRIBUTE}.
 * </ul>
 *
 * <p>Fences are compared per lock name: the sender names the lock whose fence it carries. Fencing
 * protects a resource from a holder that has lost its lease and does not know it yet; it is not
 * authentication, and a sender that lies about its lock name is not stopped by it.
 *
 * <p>A guarded request cannot be handled asynchronously ({@code Callable}, {@code DeferredResult}):
 * its write would come after the gate has let the resource go. Its {@code startAsync} throws an
 * {@link IllegalStateException} that says so (a 500), rather than let the write through unfenced.
 *
 * <p>Errors are plain text, the sender's input never echoed unescaped into HTML.
 */
public final class FencedRequestFilter implements Filter {
    /** The request header that names the lock whose fence the request carries. */
    public static final String LOCK_HEADER = "Turnstile-Lock";
    /** The request header that carries the fence. */
    public static final String FENCE_HEADER = "Turnstile-Fence";
    /** The response header of a 409 that gives the highest fence the resource has admitted. */
    public static final String SEEN_HEADER = "Turnstile-Fence-Seen";
    /** The request attribute (a {@code Long}) that holds an admitted request's fence. */
    public static final String FENCE_ATTRIBUTE = "dev.turnstile.fence";
    /** The request attribute (a {@code String}) that holds an admitted request's lock name. */
    public static final String LOCK_ATTRIBUTE = "dev.turnstile.lock";

    private static final Logger LOG = LoggerFactory.getLogger(FencedRequestFilter.class);
    private static final int PRECONDITION_REQUIRED = 428;
    private static final Set<String> KNOWN_METHODS = new java.util.LinkedHashSet<>(
            List.of("POST", "PUT", "PATCH", "DELETE", "GET", "HEAD", "OPTIONS", "TRACE"));

    private final FenceGate gate;
    private final List<String> paths;
    private final Set<String> methods;
    private final AntPathMatcher matcher = new AntPathMatcher();
    /** Paths as Spring MVC routes them: percent-decoded, without ;parameters, double slashes merged. */
    private static final UrlPathHelper ROUTED = routed();

    private static UrlPathHelper routed() {
        UrlPathHelper helper = new UrlPathHelper();
        helper.setUrlDecode(true);
        helper.setRemoveSemicolonContent(true);
        return helper;
    }

    /**
     * Creates the filter.
     *
     * @param gate where fences are recorded and compared
     * @param paths the request paths it guards, Ant-style ({@code /api/**}), within the application's context path
     * @param methods the HTTP methods it guards (for example POST, PUT, PATCH, DELETE); others pass unchecked
     * @throws IllegalArgumentException if a path does not start with {@code /} or a list is empty
     */
    public FencedRequestFilter(FenceGate gate, List<String> paths, Set<String> methods) {
        if (paths.isEmpty()) {
            throw new IllegalArgumentException("turnstile.fencing.http.paths is empty: name the paths to guard, e.g. /api/**");
        }
        for (String p : paths) {
            if (!p.startsWith("/")) {
                throw new IllegalArgumentException("turnstile.fencing.http.paths: '" + p
                        + "' does not start with '/': give a path within the application, e.g. /api/**");
            }
        }
        if (methods.isEmpty()) {
            throw new IllegalArgumentException("turnstile.fencing.http.methods is empty: name the methods to guard, e.g. POST, PUT");
        }
        this.gate = gate;
        this.paths = List.copyOf(paths);
        this.methods = methods.stream().map(m -> m.strip().toUpperCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
        for (String m : this.methods) {
            if (!KNOWN_METHODS.contains(m)) {
                throw new IllegalArgumentException("turnstile.fencing.http.methods: '" + m + "' is not an HTTP method (a typo "
                        + "would leave the writes unguarded): give some of " + String.join(", ", KNOWN_METHODS));
            }
        }
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        // Only the request as it arrives: a forward, an include, an error page or an async dispatch
        // belongs to a request the filter has already let through (or refused).
        if (!(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)
                || request.getDispatcherType() != DispatcherType.REQUEST || !guards(request)) {
            chain.doFilter(req, res);
            return;
        }
        String lock = request.getHeader(LOCK_HEADER);
        String fenceText = request.getHeader(FENCE_HEADER);
        if (lock == null || fenceText == null) {
            refuse(response, PRECONDITION_REQUIRED, "this request writes a fenced resource: send the lock's name in "
                    + LOCK_HEADER + " and the lease's fence in " + FENCE_HEADER);
            return;
        }
        long fence;
        String resource;
        try {
            fence = FenceGate.checkFence(parse(fenceText));
            resource = FenceGate.checkResource(decodeLock(lock));
        } catch (IllegalArgumentException e) {
            refuse(response, HttpServletResponse.SC_BAD_REQUEST, String.valueOf(e.getMessage()));
            return;
        }
        boolean[] admitted = {false};
        try {
            gate.<Boolean, Exception>admit(resource, fence, () -> {
                admitted[0] = true;
                request.setAttribute(FENCE_ATTRIBUTE, fence);
                request.setAttribute(LOCK_ATTRIBUTE, resource);
                chain.doFilter(synchronous(request), response);
                return Boolean.TRUE;
            });
        } catch (StaleFenceException e) {
            if (admitted[0]) {
                throw e; // the handler's own, from a write of its own
            }
            LOG.info("refused {} {}: stale fence {} for lock '{}' (highest admitted {})", request.getMethod(),
                    request.getRequestURI(), fence, resource, e.highestSeen());
            response.setHeader(SEEN_HEADER, Long.toString(e.highestSeen()));
            refuse(response, HttpServletResponse.SC_CONFLICT, String.valueOf(e.getMessage()));
        } catch (StoreUnavailableException e) {
            if (admitted[0]) {
                throw e;
            }
            LOG.warn("cannot check the fence of {} {}: {}", request.getMethod(), request.getRequestURI(), e.getMessage());
            refuse(response, HttpServletResponse.SC_SERVICE_UNAVAILABLE, "the fence store cannot be reached or has no free "
                    + "connection; nothing was written: try again later");
        } catch (IOException | ServletException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new ServletException(e); // the chain throws nothing else
        }
    }

    /**
     * Whether the request is one to guard: its method is, and its path matches as sent or as the
     * application routes it (percent-decoded, {@code ;parameters} and {@code //} removed), so that
     * {@code /%61pi/x} or {@code /api;x=1/x} is guarded as {@code /api/x} is.
     */
    private boolean guards(HttpServletRequest request) {
        if (!methods.contains(request.getMethod())) {
            return false;
        }
        String raw = request.getRequestURI().substring(Math.min(request.getContextPath().length(), request.getRequestURI().length()));
        String routed;
        try {
            routed = ROUTED.getPathWithinApplication(request);
        } catch (IllegalArgumentException | IllegalStateException e) {
            routed = raw;
        }
        for (String p : paths) {
            if (matcher.match(p, raw) || matcher.match(p, routed)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The request as the handler sees it: it cannot go asynchronous. An asynchronous handler (a
     * {@code Callable}, a {@code DeferredResult}) writes after the filter's chain has returned, when
     * the gate has let the resource go, so its write could land after a newer fence's; and the gate
     * cannot wait for it on this thread, as the servlet container holds the async dispatch until
     * this thread returns.
     */
    private static HttpServletRequest synchronous(HttpServletRequest request) {
        return new HttpServletRequestWrapper(request) {
            @Override
            public AsyncContext startAsync() {
                throw refusedAsync();
            }

            @Override
            public AsyncContext startAsync(ServletRequest req, ServletResponse res) {
                throw refusedAsync();
            }
        };
    }

    private static IllegalStateException refusedAsync() {
        return new IllegalStateException("a fenced request cannot be handled asynchronously (Callable, DeferredResult, "
                + "WebAsyncTask): its write would land after the fence gate has let the resource go. Write synchronously "
                + "on guarded paths, or take the path out of turnstile.fencing.http.paths and fence the write itself "
                + "(SqlFences, RedisFences)");
    }

    /**
     * Returns the value of {@value #LOCK_HEADER} for a lock name: HTTP header values are bytes
     * without a character set, so the name travels percent-encoded in UTF-8 ({@code %} itself, every
     * character outside printable ASCII, and leading or trailing spaces), as in a URL.
     *
     * @param lockName the lock name
     * @return the header value
     */
    public static String lockHeaderValue(String lockName) {
        StringBuilder out = new StringBuilder();
        byte[] bytes = lockName.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < bytes.length; i++) {
            int b = bytes[i] & 0xff;
            boolean edgeSpace = b == ' ' && (i == 0 || i == bytes.length - 1);
            if (b == '%' || b < 0x20 || b > 0x7e || edgeSpace) {
                out.append('%').append(Character.toUpperCase(Character.forDigit(b >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(b & 0xf, 16)));
            } else {
                out.append((char) b);
            }
        }
        return out.toString();
    }

    /** The lock name of a {@value #LOCK_HEADER} value; see {@link #lockHeaderValue}. */
    static String decodeLock(String value) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(value.length());
        for (int i = 0; i < value.length(); i++) {
            char ch = value.charAt(i);
            if (ch > 0x7e) {
                throw new IllegalArgumentException(LOCK_HEADER + " holds a character outside ASCII: percent-encode the lock "
                        + "name in UTF-8 (FencedRequestFilter.lockHeaderValue does it)");
            }
            if (ch == '%') {
                int hi = i + 2 < value.length() ? Character.digit(value.charAt(i + 1), 16) : -1;
                int lo = hi < 0 ? -1 : Character.digit(value.charAt(i + 2), 16);
                if (lo < 0) {
                    throw new IllegalArgumentException(LOCK_HEADER + " has a '%' that is not followed by two hex digits: "
                            + "percent-encode the lock name in UTF-8 ('%' as %25)");
                }
                bytes.write((hi << 4) | lo);
                i += 2;
            } else {
                bytes.write(ch);
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException(LOCK_HEADER + " is not percent-encoded UTF-8: encode the lock name with "
                    + "FencedRequestFilter.lockHeaderValue", e);
        }
    }

    private static long parse(String text) {
        String t = text.strip();
        if (t.isEmpty() || t.length() > 19 || !t.chars().allMatch(ch -> ch >= '0' && ch <= '9')) {
            throw new IllegalArgumentException(FENCE_HEADER + " must be a positive whole number (the lease's fence), at "
                    + "most 19 digits; got " + t.length() + " characters");
        }
        try {
            return Long.parseLong(t);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(FENCE_HEADER + " is larger than any fence (2^63 - 1)", e);
        }
    }

    private static void refuse(HttpServletResponse response, int status, String message) throws IOException {
        if (response.isCommitted()) {
            return;
        }
        response.setStatus(status);
        response.setContentType("text/plain;charset=UTF-8");
        response.setHeader("X-Content-Type-Options", "nosniff");
        response.getWriter().write(message + "\n");
    }

    @Override
    public String toString() {
        return "FencedRequestFilter" + paths + methods + " over " + gate;
    }
}
