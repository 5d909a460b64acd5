package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
    void hostileTextIsEscapedOnOneLineAndReadBackUnchanged() {
        String hostile = "quote \" backslash \\ slash / nul \u0000 bell \u0007 esc \u001b del \u007f cr \r lf \n tab \t "
                + "line separators \u2028\u2029 BOM \ufeff é 中文 emoji 😀 (a surrogate pair) }{][,:";
        Event e = new Event(7, 8, 2, Event.ERROR, -1, "out\"come", hostile);
        String line = e.toJson();
        assertThat(line).doesNotContain("\n").doesNotContain("\r").doesNotContain("\u0000").doesNotContain("\u001b");
        assertThat(Event.fromJson(line)).isEqualTo(e);
    }

    @Test
    void aBrokenLineIsAnIllegalArgumentExceptionThatShowsIt() {
        assertThatThrownBy(() -> Event.fromJson("{\"t\":1,\"type\":\"acq")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a JSON object").hasMessageContaining("{\"t\":1");
        assertThatThrownBy(() -> Event.fromJson("[1,2]")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void nestedValuesAreWrittenWithTheirNullsAndReadBack() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("a", List.of(1L, 2.5, "x", true));
        m.put("b", null);
        m.put("c", Map.of("d", "é\"\\"));
        assertThat(Json.write(m)).isEqualTo("{\"a\":[1,2.5,\"x\",true],\"b\":null,\"c\":{\"d\":\"é\\\"\\\\\"}}");
        assertThat(Json.pretty(m)).endsWith("\n").contains("\n  \"b\" : null");
        assertThat(Json.parseObject(Json.pretty(m))).isEqualTo(Json.parseObject(Json.write(m)));
        assertThat(Json.parseObject(Json.write(m)).get("c")).isEqualTo(Map.of("d", "é\"\\"));
    }
}
