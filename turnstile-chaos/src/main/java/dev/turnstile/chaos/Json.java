package dev.turnstile.chaos;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The little JSON the harness needs: writing nested maps, lists, strings, numbers and booleans, and
 * reading JSON values back (objects become {@link LinkedHashMap}s, arrays {@link ArrayList}s, integers
 * {@link Long}s, other numbers {@link Double}s).
 */
public final class Json {
    private Json() {}

    /** Writes a value as compact JSON. */
    public static String write(Object value) {
        StringBuilder b = new StringBuilder();
        write(b, value, null, 0);
        return b.toString();
    }

    /** Writes a value as indented JSON. */
    public static String pretty(Object value) {
        StringBuilder b = new StringBuilder();
        write(b, value, "  ", 0);
        return b.append('\n').toString();
    }

    private static void write(StringBuilder b, Object v, String indent, int depth) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof String s) {
            quote(b, s);
        } else if (v instanceof Double d && (d.isNaN() || d.isInfinite())) {
            b.append("null");
        } else if (v instanceof Number || v instanceof Boolean) {
            b.append(v);
        } else if (v instanceof Map<?, ?> m) {
            b.append('{');
            int i = 0;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                b.append(i++ > 0 ? "," : "");
                newline(b, indent, depth + 1);
                quote(b, String.valueOf(e.getKey()));
                b.append(indent != null ? ": " : ":");
                write(b, e.getValue(), indent, depth + 1);
            }
            if (i > 0) {
                newline(b, indent, depth);
            }
            b.append('}');
        } else if (v instanceof Collection<?> c) {
            b.append('[');
            int i = 0;
            for (Object o : c) {
                b.append(i++ > 0 ? "," : "");
                newline(b, indent, depth + 1);
                write(b, o, indent, depth + 1);
            }
            if (i > 0) {
                newline(b, indent, depth);
            }
            b.append(']');
        } else {
            quote(b, v.toString());
        }
    }

    private static void newline(StringBuilder b, String indent, int depth) {
        if (indent != null) {
            b.append('\n').append(indent.repeat(depth));
        }
    }

    private static void quote(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }

    /** Parses one JSON value. */
    public static Object parse(String text) {
        Parser p = new Parser(text);
        p.ws();
        Object v = p.value();
        p.ws();
        if (p.i != text.length()) {
            throw p.error("trailing characters");
        }
        return v;
    }

    /** Parses a JSON object. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> parseObject(String text) {
        Object v = parse(text);
        if (!(v instanceof Map)) {
            throw new IllegalArgumentException("not a JSON object: " + text);
        }
        return (Map<String, Object>) v;
    }

    private static final class Parser {
        final String s;
        int i;

        Parser(String s) {
            this.s = s;
        }

        IllegalArgumentException error(String what) {
            return new IllegalArgumentException(what + " at " + i + " in: " + (s.length() > 200 ? s.substring(0, 200) + "…" : s));
        }

        void ws() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        Object value() {
            if (i >= s.length()) {
                throw error("unexpected end");
            }
            char c = s.charAt(i);
            switch (c) {
                case '{': return object();
                case '[': return array();
                case '"': return string();
                case 't': literal("true"); return Boolean.TRUE;
                case 'f': literal("false"); return Boolean.FALSE;
                case 'n': literal("null"); return null;
                default: return number();
            }
        }

        void literal(String word) {
            if (!s.startsWith(word, i)) {
                throw error("expected " + word);
            }
            i += word.length();
        }

        Map<String, Object> object() {
            Map<String, Object> m = new LinkedHashMap<>();
            i++;
            ws();
            if (peek() == '}') {
                i++;
                return m;
            }
            while (true) {
                ws();
                String k = string();
                ws();
                expect(':');
                ws();
                m.put(k, value());
                ws();
                if (peek() == ',') {
                    i++;
                } else {
                    expect('}');
                    return m;
                }
            }
        }

        List<Object> array() {
            List<Object> l = new ArrayList<>();
            i++;
            ws();
            if (peek() == ']') {
                i++;
                return l;
            }
            while (true) {
                ws();
                l.add(value());
                ws();
                if (peek() == ',') {
                    i++;
                } else {
                    expect(']');
                    return l;
                }
            }
        }

        char peek() {
            if (i >= s.length()) {
                throw error("unexpected end");
            }
            return s.charAt(i);
        }

        void expect(char c) {
            if (peek() != c) {
                throw error("expected '" + c + "'");
            }
            i++;
        }

        String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = peek();
                i++;
                if (c == '"') {
                    return b.toString();
                }
                if (c == '\\') {
                    char e = peek();
                    i++;
                    switch (e) {
                        case 'n' -> b.append('\n');
                        case 'r' -> b.append('\r');
                        case 't' -> b.append('\t');
                        case 'b' -> b.append('\b');
                        case 'f' -> b.append('\f');
                        case 'u' -> {
                            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                            i += 4;
                        }
                        default -> b.append(e);
                    }
                } else {
                    b.append(c);
                }
            }
        }

        Object number() {
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
            String n = s.substring(start, i);
            if (n.isEmpty()) {
                throw error("unexpected character");
            }
            if (n.contains(".") || n.contains("e") || n.contains("E")) {
                return Double.parseDouble(n);
            }
            return Long.parseLong(n);
        }
    }
}
