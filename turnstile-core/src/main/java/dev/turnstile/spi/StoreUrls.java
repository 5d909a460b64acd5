package dev.turnstile.spi;

import java.util.regex.Pattern;

/** Hides secrets in store URLs before they reach a log, a message or the terminal. */
public final class StoreUrls {
    private static final Pattern USER_INFO = Pattern.compile("(//[^/@:?#]*:)[^/@?#]*@");
    private static final Pattern SECRET_PARAM = Pattern.compile(
            "(?i)([?&;](?:password|pass|pwd|secret|sslpassword|token)=)[^&;#]*");

    private StoreUrls() {}

    /**
     * Replaces the password in a URL's user info and in {@code password=}-like parameters with
     * {@code ***}.
     *
     * @param url a store URL, or {@code null}
     * @return the URL without secrets ({@code "null"} for {@code null})
     */
    public static String redact(String url) {
        if (url == null) {
            return "null";
        }
        String s = USER_INFO.matcher(url).replaceAll("$1***@");
        return SECRET_PARAM.matcher(s).replaceAll("$1***");
    }
}
