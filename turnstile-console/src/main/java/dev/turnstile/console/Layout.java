package dev.turnstile.console;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/** The frame every page shares: head, navigation, the store and the console's clock. */
final class Layout {
    private Layout() {}

    /**
     * A whole page. {@code body} is HTML the caller built with {@link Html}; everything else that
     * goes in is escaped here.
     */
    static String page(ConsoleRequest r, String title, String current, String storeLabel, Instant now,
            @Nullable Instant storeNow, String body) {
        String base = Html.text(r.basePath());
        StringBuilder b = new StringBuilder(body.length() + 2048);
        b.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
                .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
                
                .append("<title>").append(Html.text(title)).append(" · Turnstile console</title>")
                .append("<link rel=\"stylesheet\" href=\"").append(base).append("/static/console.css\">")
                .append("<script src=\"").append(base).append("/static/console.js\" defer></script>")
                .append("</head><body><header><span class=\"brand\">Turnstile console</span><nav>");
        nav(b, base, "/", "Locks", current);
        nav(b, base, "/jobs", "Jobs", current);
        nav(b, base, "/leaders", "Leadership", current);
        nav(b, base, "/claims", "Claims", current);
        nav(b, base, "/history", "History", current);
        b.append("</nav><span class=\"store\">store: <b id=\"store\">").append(Html.text(storeLabel)).append("</b>")
                .append(" · <span id=\"clock\">");
        if (storeNow != null) {
            b.append("store clock: <span id=\"store-clock\">").append(Html.time(storeNow)).append("</span> · ");
        }
        b.append("console clock: ").append(Html.time(now)).append("</span>");
        if (r.user() != null) {
            b.append(" · signed in as <b id=\"user\">").append(Html.text(r.user())).append("</b>");
        }
        b.append("</span></header><main id=\"content\">").append(body).append("</main></body></html>\n");
        return b.toString();
    }

    private static void nav(StringBuilder b, String base, String path, String label, String current) {
        b.append("<a href=\"").append(base).append(path).append('"')
                .append(path.equals(current) ? " aria-current=\"page\"" : "").append('>').append(label).append("</a>");
    }

    /** A page that says what went wrong and what to do: every refusal uses it. */
    static String message(String heading, String text) {
        return "<h1>" + Html.text(heading) + "</h1><p class=\"message\" id=\"message\">" + Html.text(text) + "</p>";
    }
}
