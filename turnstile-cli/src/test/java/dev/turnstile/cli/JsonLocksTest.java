package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.turnstile.LockInfo;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The exact shape of {@code locks --json}, and names that could break it (read back by databind, not by jackson-jr). */
class JsonLocksTest {
    static final Instant AT = Instant.parse("2026-11-23T10:15:30.123456Z");

    private static String json(List<LockInfo> locks) {
        StringWriter s = new StringWriter();
        try (PrintWriter out = new PrintWriter(s)) {
            JsonLocks.write(out, locks);
        }
        return s.toString().replace(System.lineSeparator(), "\n");
    }

    private static LockInfo lock(String name) {
        return new LockInfo(name, "owner " + name, 42, AT, AT.plusSeconds(30));
    }

    @Test
    void noLocksIsAnEmptyArray() {
        assertThat(json(List.of())).isEqualTo("[]\n");
    }

    @Test
    void oneCompactObjectALine() {
        assertThat(json(List.of(lock("a"), lock("b")))).isEqualTo("[\n"
                + " {\"name\":\"a\",\"owner\":\"owner a\",\"fence\":42,\"acquiredAt\":\"2026-11-23T10:15:30.123456Z\","
                + "\"expiresAt\":\"2026-11-23T10:16:00.123456Z\"},\n"
                + " {\"name\":\"b\",\"owner\":\"owner b\",\"fence\":42,\"acquiredAt\":\"2026-11-23T10:15:30.123456Z\","
                + "\"expiresAt\":\"2026-11-23T10:16:00.123456Z\"}\n]\n");
    }

    @Test
    void everyOddNameReadsBackAsItselfAndNothingRawIsPrinted() throws Exception {
        List<LockInfo> locks = new ArrayList<>();
        HostileInputTest.ODD_NAMES.forEach(n -> locks.add(lock(n)));
        String out = json(locks);
        assertThat(out).hasLineCount(HostileInputTest.ODD_NAMES.size() + 2);
        assertThat(out.chars().allMatch(c -> c == '\n' || c >= 0x20 && c < 0x7f)).as("printable ASCII only: " + out).isTrue();
        assertThat(out).contains("\"name\":\"caf\\u00E9\"").contains("\"name\":\"emoji \\uD83D\\uDE00\"")
                .contains("\"name\":\"quote\\\"d\"").contains("\"name\":\"back\\\\slash\"").contains("\"name\":\"del\\u007F\"");
        JsonNode array = new ObjectMapper().readTree(out);
        List<String> names = new ArrayList<>();
        array.forEach(n -> names.add(n.get("name").asText()));
        assertThat(names).containsExactlyElementsOf(HostileInputTest.ODD_NAMES);
        assertThat(array.get(0).get("fence").asLong()).isEqualTo(42);
    }
}
