package dev.turnstile.cli;

import dev.turnstile.LockInfo;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.SerializableString;
import tools.jackson.core.io.CharacterEscapes;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.core.json.JsonWriteFeature;
import tools.jackson.core.util.MinimalPrettyPrinter;
import tools.jackson.jr.ob.JSON;

/**
 * {@code turnstile locks --json}, written by jackson-jr so that any name (quotes, backslashes,
 * control characters, surrogate pairs, U+2028) reads back as itself in any JSON parser. jackson-jr,
 * not databind: a few classes to load, since start-up is most of what a CLI call costs. Kept in its
 * own class so that only {@code locks --json} loads Jackson.
 */
final class JsonLocks {
    /**
     * Everything above '~' escaped (non-ASCII and DEL): the output is printable ASCII, reads back
     * the same whatever the reader's encoding, U+2028/U+2029 cannot end a line in a JavaScript
     * consumer, and nothing reaches a terminal raw. One lock a line, for grep and diff.
     */
    private static final JSON JSON_OUT = JSON.builder(JsonFactory.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII)
                    .characterEscapes(new EscapeDel()).build())
            .prettyPrinter(new OneElementALine()).enable(JSON.Feature.PRETTY_PRINT_OUTPUT).build();

    private JsonLocks() {}

    static void write(PrintWriter out, List<LockInfo> locks) {
        List<Map<String, Object>> rows = locks.stream().map(JsonLocks::row).toList();
        try {
            out.println(JSON_OUT.asString(rows));
        } catch (JacksonException e) {
            throw new IllegalStateException("cannot write the locks as JSON: " + e.getOriginalMessage(), e);
        }
    }

    private static Map<String, Object> row(LockInfo l) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("name", l.name());
        o.put("owner", l.owner());
        o.put("fence", l.fence());
        o.put("acquiredAt", l.acquiredAt().toString());
        o.put("expiresAt", l.expiresAt().toString());
        return o;
    }

    /** JSON's own escapes, and DEL as {@code \u007F}: JSON allows it raw, a terminal should not get it. */
    static final class EscapeDel extends CharacterEscapes {
        private static final long serialVersionUID = 1L;
        private final int[] ascii = CharacterEscapes.standardAsciiEscapesForJSON();

        EscapeDel() {
            ascii[0x7f] = CharacterEscapes.ESCAPE_STANDARD;
        }

        @Override
        public int[] getEscapeCodesForAscii() {
            return ascii;
        }

        @Override
        public @Nullable SerializableString getEscapeSequence(int ch) {
            return null; // only standard escapes
        }
    }

    /** Compact objects, each on its own line of the array: {@code [\n {...},\n {...}\n]}, {@code []} when empty. */
    static final class OneElementALine extends MinimalPrettyPrinter {
        private static final long serialVersionUID = 1L;

        @Override
        public void beforeArrayValues(JsonGenerator g) {
            g.writeRaw("\n ");
        }

        @Override
        public void writeArrayValueSeparator(JsonGenerator g) {
            g.writeRaw(",\n ");
        }

        @Override
        public void writeEndArray(JsonGenerator g, int values) {
            g.writeRaw(values > 0 ? "\n]" : "]");
        }
    }
}
