package dev.turnstile.chaos;

import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.jr.ob.JSON;

/**
 * The harness's JSON, by jackson-jr: event lines (one compact object each) and the reports
 * (indented). Objects read back are maps of strings, numbers ({@link Integer}, {@link Long} or
 * {@link Double}), booleans, lists and maps. Nulls are written, so every report field is there.
 */
final class Json {
    private static final JSON COMPACT = JSON.std.with(JSON.Feature.WRITE_NULL_PROPERTIES);
    private static final JSON PRETTY = COMPACT.with(JSON.Feature.PRETTY_PRINT_OUTPUT);

    private Json() {}

    /** Writes a value (maps, lists, strings, numbers, booleans, null) as one line of JSON. */
    static String write(Object value) {
        return COMPACT.asString(value);
    }

    /** Writes a value as indented JSON ending in a newline. */
    static String pretty(Object value) {
        return PRETTY.asString(value) + "\n";
    }

    /**
     * Reads one JSON object.
     *
     * @throws IllegalArgumentException if the text is not one JSON object
     */
    static Map<String, Object> parseObject(String text) {
        try {
            return COMPACT.mapFrom(text);
        } catch (JacksonException e) {
            throw new IllegalArgumentException("not a JSON object: " + e.getOriginalMessage() + " in: "
                    + (text.length() > 200 ? text.substring(0, 200) + "…" : text), e);
        }
    }
}
