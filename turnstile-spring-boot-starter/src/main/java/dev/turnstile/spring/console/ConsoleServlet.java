package dev.turnstile.spring.console;

import dev.turnstile.console.Console;
import dev.turnstile.console.ConsoleRequest;
import dev.turnstile.console.ConsoleResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpSession;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.util.ClassUtils;

/**
 * Serves a {@link Console} as a servlet: the request's user is the one the application's Spring
 * Security authenticated. The release form carries two CSRF tokens: Spring Security's own, which
 * its filter checks before the request gets here, and the console's, kept in the HTTP session and
 * checked by the console (Spring Security masks its token anew on every response, so the console
 * cannot compare that one itself). Where Spring Security's CSRF protection does not run for the
 * request there is no Spring token, and the console is given no token of its own either: it
 * refuses every action.
 */
public final class ConsoleServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private static final String SESSION_TOKEN = ConsoleServlet.class.getName() + ".csrf";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final boolean SPRING_SECURITY = ClassUtils.isPresent(
            "org.springframework.security.web.csrf.CsrfToken", ConsoleServlet.class.getClassLoader());

    // never serialized: the servlet container keeps the servlet in memory
    private final transient Console console;

    /**
     * Creates the servlet.
     *
     * @param console the console to serve
     */
    public ConsoleServlet(Console console) {
        this.console = console;
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        Map<String, String> params = new HashMap<>();
        req.getParameterMap().forEach((k, v) -> {
            if (v.length > 0) {
                params.put(k, v[0]);
            }
        });
        String path = req.getPathInfo() != null ? req.getPathInfo() : "/";
        Principal user = req.getUserPrincipal();
        // only the release page and action carry a form: no session is made for the other pages
        boolean form = path.equals("/release");
        ConsoleRequest.CsrfField spring = form && SPRING_SECURITY ? SpringCsrf.field(req) : null;
        // No Origin for the console to compare: behind a proxy the Host header is the proxy's upstream
        // name, and actions here are guarded by the two CSRF tokens (Spring Security's and the console's).
        ConsoleRequest request = new ConsoleRequest(req.getMethod(), path, params, req.getContextPath() + req.getServletPath(),
                user != null ? user.getName() : null, req.getRemoteAddr(), null, req.getServerName(),
                spring != null ? ownToken(req, user) : null, spring != null ? Map.of(spring.name(), spring.value()) : Map.of());
        ConsoleResponse r = console.handle(request);
        resp.setStatus(r.status());
        Console.SECURITY_HEADERS.forEach(resp::setHeader);
        r.headers().forEach(resp::setHeader);
        resp.setContentType(r.contentType());
        byte[] body = r.body().getBytes(StandardCharsets.UTF_8);
        resp.setContentLength(body.length);
        if (!"HEAD".equalsIgnoreCase(req.getMethod())) {
            try (OutputStream out = resp.getOutputStream()) {
                out.write(body);
            }
        }
    }

    /**
     * The console's own CSRF token, one per HTTP session and signed-in user, made on first use: a
     * session kept across a sign-in (Spring's default keeps its attributes) gets a new one, so a
     * token read before the sign-in is worth nothing after it.
     */
    private static ConsoleRequest.CsrfField ownToken(HttpServletRequest req, @Nullable Principal user) {
        HttpSession session = req.getSession(true);
        String key = SESSION_TOKEN + "/" + (user != null ? user.getName() : "");
        synchronized (ConsoleServlet.class) {
            Object token = session.getAttribute(key);
            if (!(token instanceof String)) {
                byte[] b = new byte[32];
                RANDOM.nextBytes(b);
                token = Base64.getUrlEncoder().withoutPadding().encodeToString(b);
                session.setAttribute(key, token);
            }
            return new ConsoleRequest.CsrfField("turnstile_csrf", (String) token);
        }
    }

    /** Kept apart, so that the servlet loads without Spring Security. */
    private static final class SpringCsrf {
        static ConsoleRequest.@Nullable CsrfField field(HttpServletRequest req) {
            Object token = req.getAttribute(org.springframework.security.web.csrf.CsrfToken.class.getName());
            if (token instanceof org.springframework.security.web.csrf.CsrfToken t) {
                return new ConsoleRequest.CsrfField(t.getParameterName(), t.getToken());
            }
            return null;
        }
    }
}
