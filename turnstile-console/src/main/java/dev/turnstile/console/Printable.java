package dev.turnstile.console;

/** Text for a log line: backslashes, control characters, separators and format characters escaped. */
final class Printable {
    private Printable() {}

    static String of(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\') {
                b.append("\\\\");
            } else if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029' || Character.getType(c) == Character.FORMAT
                    || (Character.isSurrogate(c) && !pairedSurrogate(s, i))) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private static boolean pairedSurrogate(String s, int i) {
        return Character.isHighSurrogate(s.charAt(i)) ? i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))
                : i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
    }
}
