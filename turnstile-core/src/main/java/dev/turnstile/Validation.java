package dev.turnstile;

import java.text.Normalizer;
import java.time.Duration;

/** Input checks at the API edge. Every message names the field, shows the value and says the rule. */
final class Validation {
    /** In Unicode code points (what a SQL VARCHAR(255) of utf8mb4 or PostgreSQL counts), not UTF-16 units. */
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

    /**
     * Checks a lock name and returns it in Unicode normalization form C, the form every store sees:
     * a name typed in two editors (precomposed {@code é} or {@code e} + combining accent) is one
     * lock. Nothing else is folded: case, {@code ß}/{@code ss}, full-width letters and ligatures
     * stay distinct, as they are distinct text.
     */
    static String lockName(String name) {
        if (name == null) {
            throw new IllegalArgumentException("lock name is null: give a non-empty name");
        }
        if (name.isEmpty()) {
            throw new IllegalArgumentException("lock name is empty: give a non-empty name");
        }
        checkText("lock name", name);
        String nfc = Normalizer.normalize(name, Normalizer.Form.NFC);
        int length = nfc.codePointCount(0, nfc.length());
        if (length > MAX_NAME_LENGTH) {
            int given = name.codePointCount(0, name.length());
            throw new IllegalArgumentException("lock name is " + length + " characters (Unicode code points) long"
                    + (given != length ? " in normalization form C (" + given + " as given: NFC decomposes some characters)" : "")
                    + " ('" + nfc.substring(0, nfc.offsetByCodePoints(0, 40)) + "…'); the limit is " + MAX_NAME_LENGTH);
        }
        if (isSpace(nfc.codePointAt(0)) || isSpace(nfc.codePointBefore(nfc.length()))) {
            throw new IllegalArgumentException("lock name '" + name
                    + "' starts or ends with white space: trim it (names differing only in white space would look alike)");
        }
        return nfc;
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
        checkText("owner", owner);
        int length = owner.codePointCount(0, owner.length());
        if (length > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("owner is " + length + " characters (Unicode code points) long; the limit is "
                    + MAX_NAME_LENGTH);
        }
        return owner;
    }

    private static void checkText(String what, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isISOControl(c)) {
                throw new IllegalArgumentException(what + " '" + printable(s) + "' contains the control character U+"
                        + String.format("%04X", (int) c) + " at index " + i + ": remove it");
            }
            if ((Character.isHighSurrogate(c) && (i + 1 == s.length() || !Character.isLowSurrogate(s.charAt(i + 1))))
                    || (Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(s.charAt(i - 1))))) {
                throw new IllegalArgumentException(what + " contains a lone UTF-16 surrogate at index " + i
                        + ": it is not valid text");
            }
        }
    }

    private static String printable(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
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
