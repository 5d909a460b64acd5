package dev.turnstile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The length and normalization rules of lock names, as a caller sees them in messages. */
class NameRulesTest {

    @Test
    void theLengthIsCountedInNfcAndTheMessageSaysSoWhenNfcChangedTheCount() {
        String qa = "\u0958"; // DEVANAGARI LETTER QA: one code point, two in NFC (U+0915 U+093C)
        String name = "attack-" + qa.repeat(247) + "a";
        assertThat(name.codePointCount(0, name.length())).isEqualTo(255);
        assertThatThrownBy(() -> Turnstile.checkLockName(name)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("502 characters (Unicode code points) long in normalization form C (255 as given")
                .hasMessageContaining("the limit is 255");
        assertThatThrownBy(() -> Turnstile.checkLockName("x".repeat(256))).hasMessageContaining("256 characters (Unicode code points) long ('")
                .hasMessageNotContaining("as given");
    }

    @Test
    void theNameComesBackInNfc() {
        assertThat(Turnstile.checkLockName("cafe\u0301")).isEqualTo("caf\u00e9");
        assertThat(Turnstile.checkLockName("Stra\u00dfe")).isEqualTo("Stra\u00dfe");
    }
}
