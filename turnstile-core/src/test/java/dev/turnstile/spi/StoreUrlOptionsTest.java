package dev.turnstile.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Duration options in a store URL: every unit a range message uses is one the parser takes. */
class StoreUrlOptionsTest {
    static StoreUrlOptions with(String value) {
        return StoreUrlOptions.parse("x://h/db?turnstile.t=" + value, Set.of("t"), false);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"250ms, PT0.25S", "5s, PT5S", "10m, PT10M", "1h, PT1H", "1d, PT24H", "0001s, PT1S", "86400000ms, PT24H"})
    void everyUnitIsTaken(String value, Duration expected) {
        assertThat(with(value).duration("t", null, Duration.ofMillis(1), Duration.ofDays(1))).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"PT0.1S, PT10M", "PT0.01S, PT1H", "PT0.001S, PT24H", "PT0.001S, PT480H", "PT1.5S, PT90S", "PT61S, PT1H1M"})
    void bothBoundsCanBeTypedAsTheMessageWritesThem(Duration min, Duration max) {
        String msg = catchMessage(with("0ms"), min, max);
        Matcher m = Pattern.compile("give (\\S+) to (\\S+),").matcher(msg);
        assertThat(m.find()).as(msg).isTrue();
        assertThat(with(m.group(1)).duration("t", null, min, max)).as(msg).isEqualTo(min);
        assertThat(with(m.group(2)).duration("t", null, min, max)).as(msg).isEqualTo(max);
    }

    private static String catchMessage(StoreUrlOptions o, Duration min, Duration max) {
        try {
            o.duration("t", null, min, max);
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        throw new AssertionError("0ms accepted for " + min + " to " + max);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource({"1.5s", "1h30m", "5", "s", "-1s", "5 s", "5S", "1w", "PT5S", "''", "5sec"})
    void otherSpellingsAreNotADurationAndSayHowToWriteOne(String value) {
        assertThatThrownBy(() -> with(value).duration("t", null, Duration.ofMillis(1), Duration.ofDays(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("turnstile.t=" + value + " in the store URL is not a duration: give 1ms to 1d")
                .hasMessageContaining("ms, s, m, h or d");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"2d", "1441m", "25h", "0ms", "99999999999999999999s", "9223372036854775807d", "9223372036854775807m",
            "106751991167301d"})
    void overflowAndOutOfRangeNameTheOption(String value) {
        assertThatThrownBy(() -> with(value).duration("t", null, Duration.ofMillis(1), Duration.ofDays(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("turnstile.t=" + value + " in the store URL is out of range: give 1ms to 1d, "
                        + "a whole number with ms, s, m, h or d (such as 500ms, 5s or 10m)");
    }

    @Test
    void anAbsentOptionIsTheFallback() {
        assertThat(StoreUrlOptions.parse("x://h/db", Set.of("t"), false).duration("t", Duration.ofSeconds(3)))
                .isEqualTo(Duration.ofSeconds(3));
    }
}
