package dev.turnstile.redis;

import dev.turnstile.LockInfo;
import java.time.Instant;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The value of a lock's key: {@code token=<token> fence=<n> acquired_at=<ms> expires_at=<ms>
 * owner=<owner>}, times in epoch milliseconds by the server's clock. The scripts write the fence and
 * the times between a head and a tail that the client gives, so a value is made in one
 * {@code string.format} on the server.
 */
final class LockValue {
    private static final Pattern VALUE =
            Pattern.compile("token=.*? fence=(\\d+) acquired_at=(\\d+) expires_at=(\\d+) owner=(.*)", Pattern.DOTALL);

    private LockValue() {}

    /** The value up to its fence: {@code token=<token> fence=}. */
    static String head(String token) {
        return "token=" + token + " fence=";
    }

    /** The value after its times: {@code  owner=<owner>} (the script writes fence and times before it). */
    static String tail(String owner) {
        return " owner=" + owner;
    }

    /** The lock a value describes, or null if {@code value} is null or not a lock's value. */
    static @Nullable LockInfo parse(String name, @Nullable String value) {
        Matcher m = value == null ? null : VALUE.matcher(value);
        if (m == null || !m.matches()) {
            return null;
        }
        return new LockInfo(name, m.group(4), Long.parseLong(m.group(1)),
                Instant.ofEpochMilli(Long.parseLong(m.group(2))), Instant.ofEpochMilli(Long.parseLong(m.group(3))));
    }
}
