package dev.turnstile.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.turnstile.LockInfo;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;

/**
 * {@code turnstile locks --json}, written by Jackson so that any name (quotes, backslashes, control
 * characters, surrogate pairs, U+2028) reads back as itself in any JSON parser. Kept in its own
 * class so that only {@code locks --json} loads Jackson.
 */
final class JsonLocks {
    private JsonLocks() {}

    static void write(PrintWriter out, List<LockInfo> locks) throws IOException {
        // Non-ASCII escaped: the output reads back the same whatever the reader's encoding, and
        // U+2028/U+2029 cannot end a line in a JavaScript consumer.
        JsonMapper mapper = JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII)
                .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET).build();
        StringBuilder b = new StringBuilder("[");
        for (LockInfo l : locks) {
            ObjectNode o = mapper.createObjectNode();
            o.put("name", l.name());
            o.put("owner", l.owner());
            o.put("fence", l.fence());
            o.put("acquiredAt", l.acquiredAt().toString());
            o.put("expiresAt", l.expiresAt().toString());
            b.append(b.length() > 1 ? ",\n " : "\n ").append(mapper.writeValueAsString(o)); // one lock a line
        }
        out.println(b.append(locks.isEmpty() ? "]" : "\n]"));
    }
}
