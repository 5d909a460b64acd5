package dev.turnstile;

import java.time.Duration;

/** Input checks at the API edge. Every message names the field, shows the value and says the rule. */
final class Validation {
    static final int MAX_NAME_LENGTH = 255;

    private Validation() {}

    /**
     * Null is bad input like any other: an {@link IllegalArgumentException} that says what to pass.
     *
     * @param what the parameter, as the caller knows it
     * @param hint what to give instead, e.g. "give LockOptions.defaults()"
     */
    static <T> T notNull(String what, T value, String hint) {
        if (value == null) {
            throw new IllegalArgumentException(what + " is null: " + hint);
        }
        return value;
    }

    static String lockName(String name) {
        if (name == null) {
            throw new IllegalArgumentException("lock name is null: give a non-empty name");
        }
        if (name.isEmpty()) {
            throw new IllegalArgumentException("lock name is empty: give a non-empty name");
        }
        if (name.length() > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("lock name is " + name.length() + " characters long ('"
                    + name.substring(0, 40) + "…'); the limit is " + MAX_NAME_LENGTH);
        }
        checkText("lock name", name);
        if (isSpace(name.codePointAt(0)) || isSpace(name.codePointBefore(name.length()))) {
            throw new IllegalArgumentException("lock name '" + name
                    + "' starts or ends with white space: trim it (names differing only in white space would look alike)");
        }
        return name;
    }

    /**
     * White space in the widest sense: Java's white space and every Unicode space separator, so a
     * no-break space (U+00A0, U+2007, U+202F) or an ideographic space counts too.
     */
    private static boolean isSpace(int cp) {
        return Character.isWhitespace(cp) || Character.isSpaceChar(cp);
    }

    static String owner(String owner) {
        notNull("owner", owner, "give a readable holder identity or leave the default");
        if (owner.isBlank()) {
            throw new IllegalArgumentException("owner is empty: give a readable holder identity or leave the default");
        }
        if (owner.length() > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("owner is " + owner.length() + " characters long; the limit is "
                    + MAX_NAME_LENGTH);
        }
        checkText("owner", owner);
        return owner;
    }

    private static void checkText(String what, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isISOControl(c)) {
                throw new IllegalArgumentException(what + " '" + printable(s) + "' contains the control character U+"
                        + String.format("%04X", (int) c) + " at index " + i + ": remove it");
            }
            if (Character.isHighSurrogate(c) && (i + 1 == s.length() || !Character.isLowSurrogate(s.charAt(i + 1)))
                    || Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(s.charAt(i - 1)))) {
                throw new IllegalArgumentException(what + " contains a lone UTF-16 surrogate at index " + i
                        + ": it is not valid text");
            }
        }
    }

    private static String printable(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (b.length() > 60) {
                return b.append('…').toString();
            }
            b.append(Character.isISOControl(c) ? String.format("\\u%04X", (int) c) : String.valueOf(c));
        }
        return b.toString();
    }

    static Duration ttl(String what, Duration d) {
        if (d == null) {
            throw new IllegalArgumentException(what + " is null: give a duration such as 30s");
        }
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " is " + show(d) + ": it must be positive");
        }
        if (d.compareTo(LockOptions.MIN_TTL) < 0) {
            throw new IllegalArgumentException(what + " is " + show(d) + ": it must be at least "
                    + show(LockOptions.MIN_TTL) + " (stores keep time in milliseconds)");
        }
        return notAbsurd(what, d);
    }

    static Duration nonNegative(String what, Duration d) {
        if (d == null) {
            throw new IllegalArgumentException(what + " is null: give a duration such as 0s");
        }
        if (d.isNegative()) {
            throw new IllegalArgumentException(what + " is " + show(d) + ": it must not be negative");
        }
        return notAbsurd(what, d);
    }

    private static Duration notAbsurd(String what, Duration d) {
        if (d.compareTo(LockOptions.MAX_DURATION) > 0) {
            throw new IllegalArgumentException(what + " is " + show(d) + ": the limit is "
                    + LockOptions.MAX_DURATION.toDays() + " days; use keep-alive for long work instead");
        }
        return d;
    }

    /** 500ms, 30s, 1h30m: the same forms the CLI accepts. */
    static String show(Duration d) {
        if (d.isNegative()) {
            return "-" + show(d.negated());
        }
        if (d.toNanos() % 1_000_000 != 0 || d.isZero()) {
            return d.toNanos() % 1_000_000 == 0 ? "0s" : d.toNanos() + "ns";
        }
        if (d.toMillis() < 1000 || d.toMillis() % 1000 != 0) {
            return d.toMillis() + "ms";
        }
        return d.toString().substring(2).toLowerCase(java.util.Locale.ROOT);
    }
}
