package dev.turnstile.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The scripts as the store sends them: includes in place, comments out, nothing left unresolved. */
class RedisScriptsTest {
    private static final List<String> ALL = List.of(RedisScripts.ACQUIRE, RedisScripts.EXTEND, RedisScripts.RELEASE,
            RedisScripts.RELEASE_AT_LEAST, RedisScripts.HAND_OVER, RedisScripts.FORCE_RELEASE);

    @Test
    void includesAreExpandedAndCommentsLeftOut() {
        for (String script : ALL) {
            assertThat(script).doesNotContain("--").doesNotContain("#include").endsWith("\n");
            assertThat(script.lines()).noneMatch(String::isBlank);
        }
        // the fence floor and the value's times in both scripts that grant
        assertThat(RedisScripts.ACQUIRE).contains("redis.call('INCR', KEYS[2])").contains("local now_ms")
                .contains("now_ms + ARGV[3]");
        assertThat(RedisScripts.HAND_OVER).contains("redis.call('INCR', KEYS[2])").contains("now_ms + ARGV[4]");
        // the token check first, the wake-up last
        assertThat(RedisScripts.RELEASE).startsWith("local v = redis.call('GET', KEYS[1])").contains("ZPOPMIN")
                .endsWith("return 1\n");
        assertThat(RedisScripts.FORCE_RELEASE).startsWith("if redis.call('DEL', KEYS[1]) == 0").contains("PUBLISH");
    }

    @Test
    void aMissingScriptSaysWhichOne() {
        assertThatThrownBy(() -> RedisScripts.load("no-such-script"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("no-such-script.lua is missing");
    }
}
