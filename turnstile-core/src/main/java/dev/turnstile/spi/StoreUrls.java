package dev.turnstile.spi;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Hides secrets in store URLs before they reach a log, a message or the terminal.
 *
 * <p>A password may hold any character, including the ones that structure a URL ({@code @ / : ? #
 * & ;}), so the user info is taken to end at the <em>last</em> {@code @} that is followed by
 * something shaped like a host: where a URL is ambiguous, more is hidden rather than less.
 */
public final class StoreUrls {
    /** {@code //user:} (or {@code //} for Redis) up to the last {@code @} before a host-like text. */
    private static final Pattern USER_INFO = Pattern.compile(
            "(//[^/?#@:,]*:)(.*)@(?=[\\w.\\-\\[\\]%]*(?::[^/?#,;@]*)?(?:[/?#,;]|$))");
    /** Redis accepts {@code redis://password@host}: a user info without a colon is the password. */
    private static final Pattern REDIS_USER_INFO = Pattern.compile(
            "(//)([^:]*)@(?=[\\w.\\-\\[\\]%]*(?::[^/?#,;@]*)?(?:[/?#,;]|$))");
    /**
     * Parameter names whose values are secrets: any name ending in {@code password} with or without
     * a number (MySQL's multi-factor {@code password1..3}, {@code trustCertificateKeyStorePassword},
     * PostgreSQL's {@code sslpassword}), or in {@code secret} or {@code token}, and the short forms.
     */
    private static final String KEYS = "(?:[\\w.-]*password\\d*|pass|passwd|pwd|[\\w.-]*secret|[\\w.-]*token|auth)";
    /** Query style {@code ?password=…&}, settings style {@code ;PASSWORD=…;}, MySQL's {@code (password=…,)}. */
    private static final List<Pattern> SECRET_PARAMS = List.of(
            Pattern.compile("(?i)([?&]\\s*" + KEYS + "\\s*=)([^&]*)"),
            Pattern.compile("(?i)(;\\s*" + KEYS + "\\s*=)([^;]*)"),
            Pattern.compile("(?i)([(,]\\s*" + KEYS + "\\s*=)([^,)]*)"));
    private static final String MASK = "***";

    private StoreUrls() {}

    /**
     * Replaces the password in a URL's user info and in {@code password=}-like parameters with
     * {@code ***}. Passwords holding {@code @}, {@code /}, {@code ?} or {@code #} are hidden whole.
     *
     * @param url a store URL, or {@code null}
     * @return the URL without secrets ({@code "null"} for {@code null})
     */
    public static String redact(@Nullable String url) {
        if (url == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder();
        Matcher u = userInfo(url);
        while (u.find()) {
            u.appendReplacement(b, isQuery(u) ? Matcher.quoteReplacement(u.group()) : "$1" + Matcher.quoteReplacement(MASK) + "@");
        }
        String s = u.appendTail(b).toString();
        for (Pattern p : SECRET_PARAMS) {
            s = p.matcher(s).replaceAll("$1" + Matcher.quoteReplacement(MASK));
        }
        return s;
    }

    /**
     * Returns the secrets a URL carries (user-info password, {@code password=}-like parameter values),
     * both as written and percent-decoded, longest first; used to scrub free text such as a driver's
     * error message that echoes them.
     *
     * @param url a store URL, or {@code null}
     * @return the secrets, possibly empty
     */
    public static List<String> secrets(@Nullable String url) {
        Set<String> out = new LinkedHashSet<>();
        if (url == null) {
            return List.of();
        }
        Matcher u = userInfo(url);
        while (u.find()) {
            if (!isQuery(u)) {
                add(out, u.group(2));
                if (u.group(2).contains(",")) {
                    // a node list (redlock://:a@h1,:b@h2): each node's own password too
                    for (String node : u.group(2).split(",", -1)) { // an empty node adds nothing
                        String p = node.contains("@") ? node.substring(0, node.lastIndexOf('@')) : node;
                        add(out, p.contains(":") ? p.substring(p.indexOf(':') + 1) : p);
                    }
                }
            }
        }
        for (Pattern param : SECRET_PARAMS) {
            Matcher p = param.matcher(url);
            while (p.find()) {
                add(out, p.group(2));
            }
        }
        List<String> list = new ArrayList<>(out);
        list.sort(Comparator.comparingInt(String::length).reversed());
        return List.copyOf(list);
    }

    /**
     * Removes a URL's secrets from a text: the URL itself is shown redacted, every occurrence of its
     * password (as written or percent-decoded) becomes {@code ***}, and any other URL in the text
     * is redacted too.
     *
     * @param text a message, or {@code null}
     * @param url the store URL whose secrets to remove, or {@code null}
     * @return the text without the secrets ({@code "null"} for {@code null})
     */
    public static String scrub(@Nullable String text, @Nullable String url) {
        String t = text == null ? "null" : text;
        if (url != null && !url.isEmpty()) {
            t = t.replace(url, redact(url));
            for (String secret : secrets(url)) {
                t = t.replace(secret, MASK);
            }
        }
        return redactUrlsIn(t);
    }

    /**
     * Redacts every URL-shaped word of a free text (a word with {@code ://} or starting with
     * {@code jdbc:}), leaving the prose around it alone.
     *
     * @param text a message, or {@code null}
     * @return the text with its URLs redacted ({@code "null"} for {@code null})
     */
    public static String redactUrlsIn(@Nullable String text) {
        if (text == null) {
            return "null";
        }
        Matcher m = URL_WORD.matcher(text);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(b, Matcher.quoteReplacement(redact(m.group())));
        }
        return m.appendTail(b).toString();
    }

    private static final Pattern URL_WORD = Pattern.compile("(?i)(?:jdbc:|[a-z][a-z0-9+.\\-]*://)[^\\s'\"<>]+");

    /**
     * Tells why the user info of a URL cannot be read the same way by every driver: an unencoded
     * {@code @}, {@code /}, {@code ?} or {@code #} in it. Drivers split such a URL at different
     * places and echo the pieces (a piece of the password as a "port value") in their errors.
     *
     * @param url a store URL
     * @return the problem, for a message, or {@code null} if there is none
     */
    public static @Nullable String ambiguousUserInfo(@Nullable String url) {
        if (url == null) {
            return null;
        }
        Matcher u = userInfo(url);
        while (u.find()) {
            String info = u.group(1).substring(2) + u.group(2);
            // in a node list (redlock://:a@h1,:b@h2) each node's own '@' is no ambiguity
            String rest = info.contains(",") ? info.replaceAll("(^|,)[^,@/?#]*@", "$1") : info;
            if (!isQuery(u) && rest.matches(".*[@/?#].*")) {
                return "the user:password part of the store URL contains an unencoded '@', '/', '?' or '#': "
                        + "percent-encode them (%40, %2F, %3F, %23)";
            }
        }
        return null;
    }

    /**
     * A match that is no user info but {@code //host:port/db?user=me@example.com}: host and numeric
     * port, then a path and a query with an {@code @} in a value.
     */
    private static boolean isQuery(Matcher u) {
        String info = u.group(1).substring(2) + u.group(2);
        return info.matches("[^:@#/]*:\\d+/[^@#?]*\\?[^@#]*=[^@#]*");
    }

    private static Matcher userInfo(String url) {
        String lower = url.toLowerCase(Locale.ROOT);
        boolean redis = lower.startsWith("redis") || lower.startsWith("rediss") || lower.startsWith("redlock");
        if (redis && !USER_INFO.matcher(url).find()) {
            return REDIS_USER_INFO.matcher(url);
        }
        return USER_INFO.matcher(url);
    }

    private static void add(Set<String> out, String secret) {
        if (secret == null || secret.isEmpty() || secret.equals(MASK)) {
            return;
        }
        out.add(secret);
        try {
            out.add(URLDecoder.decode(secret.replace("+", "%2B"), StandardCharsets.UTF_8));
        } catch (IllegalArgumentException notEncoded) {
            // a lone '%' or the like: the raw form is all there is
        }
    }
}
