package dev.turnstile.console;

import dev.turnstile.LockInfo;
import dev.turnstile.Turnstile;
import java.time.Instant;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Force-release: a confirmation page ({@code GET /release?name=}) that shows whose holding would be
 * cut, and the action ({@code POST /release}) that cuts it only if the lock is still held with the
 * fence the confirmation showed, so a lock that changed hands meanwhile is not taken from its new
 * holder.
 */
final class ReleasePages {
    private ReleasePages() {}

    /**
     * Whether the console offers to release a name: Turnstile must accept it as a lock name, and it
     * must not hold U+FFFD, which is what a store's bytes that are not valid text read as (two
     * different stored names would then read as one, and a release could free the other).
     */
    static boolean releasable(String name) {
        if (name.indexOf('\uFFFD') >= 0) {
            return false;
        }
        try {
            return Turnstile.checkLockName(name).equals(name);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** The confirmation page's body, or a message that says why there is nothing to confirm. */
    static String confirmation(ConsoleRequest r, String name, @Nullable LockInfo held, Instant now) {
        if (held == null) {
            return Layout.message("Not held", "Lock '" + name + "' is not held: there is nothing to release.")
                    + back(r);
        }
        ConsoleRequest.CsrfField csrf = r.csrf();
        String base = Html.text(r.basePath());
        StringBuilder b = new StringBuilder(1024);
        b.append("<h1>Force-release a lock</h1><dl class=\"lock\" id=\"confirm\">")
                .append("<dt>Name</dt><dd class=\"name\">").append(Html.text(held.name())).append("</dd>")
                .append("<dt>Holder</dt><dd>").append(Html.text(held.owner())).append("</dd>")
                .append("<dt>Fence</dt><dd>").append(held.fence()).append("</dd>")
                .append("<dt>Acquired</dt><dd>").append(Html.time(held.acquiredAt())).append("</dd>")
                .append("<dt>Expires</dt><dd>").append(Html.time(held.expiresAt())).append(" (")
                .append(Html.duration(java.time.Duration.between(now, held.expiresAt()))).append(" left)</dd></dl>")
                .append("<p class=\"warning\">The holder loses the lock. It learns at once on Redis, ZooKeeper and ")
                .append("PostgreSQL, elsewhere at its next renewal; until then it may still be working, and another ")
                .append("instance may take the lock meanwhile. A <code>turnstile run</code> holder stops its command. ")
                .append("The fence keeps growing, so a resource that checks fences refuses the old holder.</p>");
        if (csrf == null) {
            return b.append(Layout.message("Actions unavailable", "This server gives the console no CSRF token, so it "
                    + "refuses every action.")).toString();
        }
        b.append("<form method=\"post\" action=\"").append(base).append("/release\">");
        Html.hidden(b, "name", held.name());
        Html.hidden(b, "fence", Long.toString(held.fence()));
        Html.hidden(b, csrf.name(), csrf.value());
        r.formFields().forEach((k, v) -> Html.hidden(b, k, v));
        b.append("<button type=\"submit\" id=\"confirm-release\" class=\"danger\">Force-release this lock</button> ")
                .append("<a href=\"").append(base).append("/\">Cancel</a></form>");
        return b.toString();
    }

    static String back(ConsoleRequest r) {
        return "<p><a href=\"" + Html.text(r.basePath()) + "/\">Back to the locks</a></p>";
    }

    /** The fence the confirmation showed, or empty if the form carried none that parses. */
    static Optional<Long> expectedFence(ConsoleRequest r) {
        return number(r, "fence");
    }

    /** A whole number parameter, or empty if missing or not one. */
    static Optional<Long> number(ConsoleRequest r, String parameter) {
        String f = r.parameters().get(parameter);
        // ASCII digits only: Long.parseLong also reads other scripts' digits (full-width ２ is 2)
        if (f == null || f.isEmpty() || f.length() > 20 || !f.chars().allMatch(ch -> (ch >= '0' && ch <= '9') || ch == '-')) {
            return Optional.empty();
        }
        try {
            return Optional.of(Long.parseLong(f));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }
}
