package dev.turnstile.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class CommandLogCheckerTest {

    @Test
    void runsOneAfterTheOtherDoNotOverlap() {
        CommandLogChecker.Result r = CommandLogChecker.check(List.of(
                "a 1 100 0", "a 1 110 1", "a 1 120 end",
                "b 2 130 0", "b 2 140 1"));
        assertThat(r.runs()).extracting(CommandLogChecker.Run::id).containsExactly("a", "b");
        assertThat(r.overlaps()).isEmpty();
        assertThat(r.staleLines()).isZero();
        assertThat(r.fenceDisorder()).isEmpty();
        assertThat(r.runs().get(0).finished()).isTrue();
        assertThat(r.runs().get(1).finished()).isFalse();
    }

    @Test
    void aCommandThatWritesAfterTheNextOneBeganOverlapsIt() {
        CommandLogChecker.Result r = CommandLogChecker.check(List.of(
                "a 1 100 0", "b 2 130 0", "a 1 135 1", "a 1 140 2", "b 2 150 1", "c 3 160 0"));
        assertThat(r.overlaps()).containsExactly("a/b (2 lines)");
        assertThat(r.staleLines()).as("a's writes after fence 2 was seen").isEqualTo(2);
    }

    @Test
    void fencesThatDoNotRiseAndGarbageAreReported() {
        CommandLogChecker.Result r = CommandLogChecker.check(List.of("a 5 100 0", "b 5 200 0", "half a line"));
        assertThat(r.fenceDisorder()).containsExactly("a(5) then b(5)");
        assertThat(r.malformed()).isEqualTo(1);
    }
}
