package dev.turnstile.console;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.jspecify.annotations.Nullable;

/**
 * Writing HTML safely: every piece of text that came from a store or a request (lock names,
 * owners, messages) goes through {@link #text} or {@link #url}, never straight into the page.
 * Lock names are user input and may hold {@code <script>}, quotes, control characters or
 * unpaired surrogates.
 */
final class Html {
    private Html() {}

    /**
     * Escapes text for an element's content or a quoted attribute value. Besides the five HTML
     * metacharacters, control characters, line and paragraph separators, format characters and
     * lone surrogates are shown as {@code \}{@code uXXXX} (and a backslash as two), as the command
     * line shows them, so a name can neither hide part of itself nor look like another name.
     */
    static String text(@Nullable String s) {
        return s == null ? "" : escaped(Printable.of(s), false);
    }

    /**
     * Escapes a value a form sends back exactly (a hidden field's {@code value}): the text itself,
     * not its printable form, with the HTML metacharacters, control and format characters (bidi
     * overrides) and line separators written as character references, so the page's source holds
     * none of them raw and the browser posts what the server read. Never for what a person
     * reads: that goes through {@link #text}.
     */
    static String formValue(String s) {
        return escaped(s, true);
    }

    /** The five HTML metacharacters as entities; with {@code invisibleAsReferences}, the invisible ones as {@code &#N;}. */
    private static String escaped(String s, boolean invisibleAsReferences) {
        StringBuilder b = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '&' -> b.append("&amp;");
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> {
                    if (invisibleAsReferences && invisible(c)) {
                        b.append("&#").append((int) c).append(';');
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.toString();
    }

    private static boolean invisible(char c) {
        int type = Character.getType(c);
        return c < 0x20 || (c >= 0x7f && c <= 0x9f) || type == Character.FORMAT || type == Character.LINE_SEPARATOR
                || type == Character.PARAGRAPH_SEPARATOR;
    }

    /** A hidden form field that posts {@code value} back exactly. */
    static void hidden(StringBuilder b, String name, String value) {
        b.append("<input type=\"hidden\" name=\"").append(formValue(name)).append("\" value=\"").append(formValue(value))
                .append("\">");
    }

    /** A query parameter value, percent-encoded (then HTML-escaped where it goes into an attribute). */
    static String url(String s) {
        // a lone surrogate has no UTF-8 form: URLEncoder would send '?', naming another lock
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** An instant as a {@code <time>} element: UTC in the page, the viewer's zone once the script ran. */
    static String time(@Nullable Instant at) {
        if (at == null) {
            return "<span class=\"muted\">unknown</span>";
        }
        String iso = at.truncatedTo(ChronoUnit.MILLIS).toString();
        return "<time datetime=\"" + iso + "\">" + iso.replace('T', ' ').replace("Z", " UTC") + "</time>";
    }

    /** A duration for people: {@code 4.2 s}, {@code 12 min 3 s}, {@code 2 h 5 min}, {@code 3 d 4 h}; negative as "past". */
    static String duration(Duration d) {
        if (d.isNegative()) {
            return "past";
        }
        long s = d.toSeconds();
        if (s < 60) {
            return String.format(java.util.Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
        }
        if (s < 3600) {
            return (s / 60) + " min " + (s % 60) + " s";
        }
        if (s < 86_400) {
            return (s / 3600) + " h " + (s % 3600 / 60) + " min";
        }
        return (s / 86_400) + " d " + (s % 86_400 / 3600) + " h";
    }
}
