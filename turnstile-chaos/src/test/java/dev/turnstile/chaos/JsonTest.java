package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {

    @Test
    void eventsSurviveTheRoundTrip() {
        Event e = new Event(1_795_308_359_135_019L, 1_700_000_000_000L, 3, Event.WRITE, 1_795_308_359_135_019L, Event.REJECTED,
                "phase 2: \"quoted\"\nnew line\t\u0001");
        assertThat(Event.fromJson(e.toJson())).isEqualTo(e);
        Event bare = Event.of(5, -1, Event.STOP);
        assertThat(Event.fromJson(bare.toJson())).isEqualTo(bare);
    }

    @Test
    void nestedValuesAreWrittenAndRead() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("a", List.of(1L, 2.5, "x", true));
        m.put("b", null);
        m.put("c", Map.of("d", Double.POSITIVE_INFINITY));
        assertThat(Json.write(m)).isEqualTo("{\"a\":[1,2.5,\"x\",true],\"b\":null,\"c\":{\"d\":null}}");
        assertThat(Json.parse(Json.pretty(m))).isEqualTo(Json.parse(Json.write(m)));
    }
}
