package dev.turnstile.console;

/**
 * Text made safe to show where people read it (a terminal, a log line, a web page): a lock name or
 * holder can neither break a line, send escape sequences, hide part of itself nor pass for another
 * name. Escaped as JSON escapes them: a backslash as {@code \\}, newline, return and tab as
 * {@code \n}, {@code \r}, {@code \t}, and as {@code \}{@code uXXXX} (each UTF-16 unit): control
 * characters, line and paragraph separators, format characters (such as a right-to-left override or
 * a tag character, in any plane), the other default-ignorable code points that render as nothing
 * (variation selectors, the Hangul fillers, the combining grapheme joiner), spaces other than the
 * plain space, unassigned and private-use code points, and lone surrogates.
 * {@code turnstile locks}, {@code release --force} and the console all show names this way.
 */
public final class Printable {
    private Printable() {}

    /**
     * Escapes a text.
     *
     * @param s the text
     * @return the text with every invisible or line-breaking character escaped
     */
    public static String of(String s) {
        StringBuilder b = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            int n = Character.charCount(cp);
            switch (cp) {
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (hidden(cp)) {
                        for (int j = i; j < i + n; j++) {
                            b.append(String.format("\\u%04x", (int) s.charAt(j)));
                        }
                    } else {
                        b.appendCodePoint(cp);
                    }
                }
            }
            i += n;
        }
        return b.toString();
    }

    /** Whether a code point shows as nothing, as a plain space, or as something other than itself. */
    private static boolean hidden(int cp) {
        int type = Character.getType(cp);
        return Character.isISOControl(cp) || cp == 0x2028 || cp == 0x2029 || type == Character.FORMAT
                || type == Character.SURROGATE // only a lone one reaches here: a pair is one code point
                // not yet assigned (in this JVM's Unicode): no font draws it, some are reserved as invisible
                || type == Character.UNASSIGNED || type == Character.PRIVATE_USE
                // a no-break, ideographic or other space looks like ' ': 'a b' and 'a\u00a0b' are two names
                || (type == Character.SPACE_SEPARATOR && cp != ' ')
                || cp == 0x034F || cp == 0x115F || cp == 0x1160 || cp == 0x17B4 || cp == 0x17B5
                || (cp >= 0x180B && cp <= 0x180F) || cp == 0x3164 || (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0xFFA0
                || (cp >= 0x1BCA0 && cp <= 0x1BCA3) || (cp >= 0xE0000 && cp <= 0xE0FFF);
    }
}
