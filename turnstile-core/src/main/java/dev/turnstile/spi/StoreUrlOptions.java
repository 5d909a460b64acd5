package dev.turnstile.spi;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turnstile's own options carried in a store URL as {@code turnstile.<key>=<value>} parameters,
 * separated from the URL the driver sees. Query style ({@code ?a=b&c=d}) or settings style
 * ({@code ;a=b}, as H2 URLs use). Every rejection names the option and says what to give.
 *
 * @param url the URL without Turnstile's options, for the driver
 * @param options the options found, by key (without the {@code turnstile.} prefix)
 */
public record StoreUrlOptions(String url, Map<String, String> options) {
    private static final Pattern QUERY = Pattern.compile("([?&])turnstile\\.([A-Za-z]+)=([^&#]*)");
    private static final Pattern SETTINGS = Pattern.compile("(;)turnstile\\.([A-Za-z]+)=([^;#]*)");

    /**
     * Splits Turnstile's options off a URL.
     *
     * @param url the store URL
     * @param known the option keys the store understands
     * @param settingsStyle {@code true} for {@code ;key=value} URLs (H2), {@code false} for query strings
     * @return the driver URL and the options
     * @throws IllegalArgumentException for an unknown {@code turnstile.*} option (the message lists
     *     the known ones and never shows the URL's password)
     */
    public static StoreUrlOptions parse(String url, Set<String> known, boolean settingsStyle) {
        Map<String, String> options = new LinkedHashMap<>();
        Matcher m = (settingsStyle ? SETTINGS : QUERY).matcher(url);
        StringBuilder rest = new StringBuilder();
        int kept = -1;
        while (m.find()) {
            if (!known.contains(m.group(2))) {
                throw new IllegalArgumentException("unknown option 'turnstile." + m.group(2) + "' in store URL '"
                        + StoreUrls.redact(url) + "': known options are turnstile." + String.join(", turnstile.", new TreeSet<>(known)));
            }
            options.put(m.group(2), m.group(3));
            // keep '?' when it opens the query string, so the parameters after it still parse
            m.appendReplacement(rest, m.group(1).equals("?") ? "?" : "");
            kept = m.group(1).equals("?") ? rest.length() - 1 : kept;
        }
        m.appendTail(rest);
        // ...but a '?' with only a fragment after it opens nothing: host?#master reads as host#master
        if (kept >= 0 && kept + 1 < rest.length() && rest.charAt(kept + 1) == '#') {
            rest.deleteCharAt(kept);
        }
        String clean = rest.toString().replace("?&", "?");
        if (clean.endsWith("?")) {
            clean = clean.substring(0, clean.length() - 1);
        }
        return new StoreUrlOptions(clean, Collections.unmodifiableMap(options));
    }

    /**
     * Returns an option's text.
     *
     * @param key the option key
     * @param fallback the value when absent
     * @return the value
     */
    public String get(String key, String fallback) {
        return options.getOrDefault(key, fallback);
    }

    /**
     * Returns a true/false option.
     *
     * @param key the option key
     * @param fallback the value when absent
     * @return the value
     * @throws IllegalArgumentException if the value is neither true nor false
     */
    public boolean bool(String key, boolean fallback) {
        String v = options.get(key);
        if (v == null) {
            return fallback;
        }
        if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(v);
        }
        throw new IllegalArgumentException("turnstile." + key + "=" + v + " in the store URL: give true or false");
    }

    /**
     * Returns a whole-number option within bounds.
     *
     * @param key the option key
     * @param fallback the value when absent
     * @param min the smallest accepted value
     * @param max the largest accepted value
     * @return the value
     * @throws IllegalArgumentException if the value is not a whole number in range
     */
    public int integer(String key, int fallback, int min, int max) {
        String v = options.get(key);
        if (v == null) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // fall through to the message
        }
        throw new IllegalArgumentException("turnstile." + key + "=" + v + " in the store URL: give a whole number from "
                + min + " to " + max);
    }

    /** The widest range a duration option may have unless its store gives its own: 1 ms to 1 day. */
    public static final Duration MAX_DURATION_OPTION = Duration.ofDays(1);

    /**
     * Returns a positive duration option (see {@link #duration(String, Duration, Duration, Duration)}
     * for how it is written), at most {@link #MAX_DURATION_OPTION}.
     *
     * @param key the option key
     * @param fallback the value when absent
     * @return the value
     * @throws IllegalArgumentException if the value is not a duration or is outside 1 ms to 1 day
     */
    public Duration duration(String key, Duration fallback) {
        return duration(key, fallback, Duration.ofMillis(1), MAX_DURATION_OPTION);
    }

    /** A whole number and one unit; fractions are refused so that {@code 1.5s} cannot be read as 1 s or 5 s. */
    private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h|d)");

    /**
     * Returns a duration option within a range, so that no value can overflow what the driver takes
     * (an {@code int} of milliseconds) or stand for "forever" by accident. A duration is a whole
     * number and one unit: {@code ms}, {@code s}, {@code m}, {@code h} or {@code d} ({@code 250ms},
     * {@code 5s}, {@code 10m}, {@code 1h}, {@code 1d}); fractions ({@code 1.5s}) and sums
     * ({@code 1h30m}) are refused: write {@code 1500ms} or {@code 90m}. The range in a refusal is
     * written in these units, so either bound can be typed as shown.
     *
     * @param key the option key
     * @param fallback the value when absent (not checked against the range)
     * @param min the shortest accepted value, positive
     * @param max the longest accepted value
     * @return the value
     * @throws IllegalArgumentException naming the option and the range if the value is malformed or
     *     outside {@code [min, max]} (a number too large for any duration included)
     */
    public Duration duration(String key, Duration fallback, Duration min, Duration max) {
        String v = options.get(key);
        if (v == null) {
            return fallback;
        }
        String range = "give " + show(min) + " to " + show(max) + ", a whole number with ms, s, m, h or d (such as 500ms, 5s or 10m)";
        Matcher m = DURATION.matcher(v);
        if (!m.matches()) {
            throw new IllegalArgumentException("turnstile." + key + "=" + v + " in the store URL is not a duration: " + range);
        }
        Duration d;
        try {
            long n = Long.parseLong(m.group(1));
            d = switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            };
        } catch (NumberFormatException | ArithmeticException e) {
            // more digits than a long holds, or more than a Duration holds: too long for any option
            d = null;
        }
        if (d == null || d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            throw new IllegalArgumentException("turnstile." + key + "=" + v + " in the store URL is out of range: " + range);
        }
        return d;
    }

    private static String show(Duration d) {
        long ms = d.toMillis();
        if (ms % 86_400_000 == 0) {
            return ms / 86_400_000 + "d";
        }
        if (ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0) {
            return ms / 60_000 + "m";
        }
        return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
    }
}
