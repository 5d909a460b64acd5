package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The guard process driven directly: it starts the command only with a deadline that leaves more than the grace. */
class GuardTest {
    @TempDir Path dir;

    private int startWith(String clock, Duration grace, Duration left, Path marker) throws Exception {
        Guard g = Guard.start(List.of("touch", marker.toString()), Map.of("TURNSTILE_GUARD_CLOCK", clock), grace);
        assertThat(g.absoluteDeadlines()).as("clock '" + clock + "'").isEqualTo(!clock.equals("relative"));
        long deadline = System.nanoTime() + left.toNanos();
        g.begin(deadline);
        return g.waitFor();
    }

    @Test
    void aDeadlineThatLeavesNoMoreThanTheGraceStartsNothing() throws Exception {
        for (String clock : List.of("", "syscall", "relative")) {
            Path refused = dir.resolve("refused-" + clock);
            assertThat(startWith(clock, Duration.ofSeconds(1), Duration.ofMillis(900), refused)).isEqualTo(Guard.NOT_STARTED);
            assertThat(refused).doesNotExist();
            Path past = dir.resolve("past-" + clock);
            assertThat(startWith(clock, Duration.ZERO, Duration.ofMillis(-50), past)).isEqualTo(Guard.NOT_STARTED);
            assertThat(past).doesNotExist();
            Path ran = dir.resolve("ran-" + clock);
            assertThat(startWith(clock, Duration.ofSeconds(1), Duration.ofSeconds(5), ran)).isZero();
            assertThat(ran).exists();
        }
    }

    @Test
    void aStartSentLateCannotStretchAnAbsoluteDeadline() throws Exception {
        Path marker = dir.resolve("late");
        Guard g = Guard.start(List.of("touch", marker.toString()), Map.of(), Duration.ofMillis(500));
        long deadline = System.nanoTime() + Duration.ofMillis(800).toNanos();
        Thread.sleep(400); // a pause between computing the deadline and sending it
        g.begin(deadline);
        assertThat(g.waitFor()).isEqualTo(Guard.NOT_STARTED);
        assertThat(g.refusal()).contains("deadline too close");
        assertThat(marker).doesNotExist();
    }
}
