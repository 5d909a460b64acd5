package dev.turnstile.console;

import dev.turnstile.LockInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * The held-locks page: every lock the store holds, filtered by a search, at most {@code maxRows}
 * rows (a page with 10,000 rows stays usable only if the browser is not asked to lay them all out).
 */
final class LocksPage {
    /** The longest search kept: longer than any lock name or owner (255 code points), shorter than a page. */
    static final int MAX_QUERY = 300;

    private LocksPage() {}

    static String body(ConsoleRequest r, List<LockInfo> locks, Instant now, int maxRows, boolean actions) {
        String query = r.parameters().getOrDefault("q", "").strip();
        if (query.length() > MAX_QUERY) {
            query = query.substring(0, MAX_QUERY);
        }
        String needle = query.toLowerCase(Locale.ROOT);
        List<LockInfo> shown = needle.isEmpty() ? locks : locks.stream()
                .filter(l -> l.name().toLowerCase(Locale.ROOT).contains(needle) || l.owner().toLowerCase(Locale.ROOT).contains(needle))
                .toList();
        String base = Html.text(r.basePath());
        StringBuilder b = new StringBuilder(256 + Math.min(shown.size(), maxRows) * 400);
        b.append("<h1>Held locks</h1>")
                .append("<form class=\"search\" method=\"get\" action=\"").append(base).append("/\" role=\"search\">")
                .append("<input type=\"search\" name=\"q\" id=\"q\" maxlength=\"").append(MAX_QUERY)
                .append("\" placeholder=\"filter by name or holder\" value=\"").append(Html.text(query)).append("\">")
                .append("<button type=\"submit\">Filter</button></form>")
                .append("<div id=\"live\" data-refresh=\"5\">")
                .append("<p class=\"summary\" id=\"summary\">");
        if (locks.isEmpty()) {
            b.append("No locks held.");
        } else {
            b.append(count(shown.size(), "lock")).append(needle.isEmpty() ? " held" : " of " + locks.size() + " match")
                    .append(shown.size() > maxRows ? "; the first " + maxRows + " by name are shown: narrow the filter to see the rest" : "")
                    .append('.');
        }
        b.append(" Times are the store's, shown in your time zone; time left is counted by the store's clock where the "
                + "console can read it, else by its own.</p>");
        if (!shown.isEmpty()) {
            b.append("<table id=\"locks\"><thead><tr><th>Name</th><th>Holder</th><th class=\"num\">Fence</th>")
                    .append("<th>Acquired</th><th>Expires</th><th class=\"num\">Time left</th>")
                    .append(actions ? "<th></th>" : "").append("</tr></thead><tbody>");
            int n = 0;
            for (LockInfo l : shown) {
                if (n++ == maxRows) {
                    break;
                }
                row(b, base, l, now, actions);
            }
            b.append("</tbody></table>");
        }
        return b.append("</div>").toString();
    }

    private static void row(StringBuilder b, String base, LockInfo l, Instant now, boolean actions) {
        Duration left = l.expiresAt() == null ? Duration.ZERO : Duration.between(now, l.expiresAt());
        b.append("<tr><td class=\"name\">").append(Html.text(l.name())).append("</td><td>").append(Html.text(l.owner()))
                .append("</td><td class=\"num\">").append(l.fence()).append("</td><td>").append(Html.time(l.acquiredAt()))
                .append("</td><td>").append(Html.time(l.expiresAt())).append("</td><td class=\"num\">")
                .append(l.expiresAt() == null ? "" : Html.duration(left)).append("</td>");
        if (actions) {
            b.append("<td>");
            if (ReleasePages.releasable(l.name())) {
                b.append("<a class=\"release\" href=\"").append(base).append("/release?name=").append(Html.text(Html.url(l.name())))
                        .append("\">Release…</a>");
            }
            b.append("</td>");
        }
        b.append("</tr>");
    }

    static String count(int n, String what) {
        return String.format(Locale.ROOT, "%,d %s%s", n, what, n == 1 ? "" : "s");
    }
}
