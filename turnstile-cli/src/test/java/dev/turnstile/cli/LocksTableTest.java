package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.LockInfo;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code turnstile locks}: every column lines up, whatever the width of its cells (issue 28 item 9). */
class LocksTableTest {

    @Test
    void aSixteenDigitFenceKeepsTheColumnsInLine() {
        Instant at = Instant.parse("2026-11-26T17:00:00.123Z");
        StringWriter s = new StringWriter();
        LocksCommand.table(new PrintWriter(s, true), List.of(
                new LockInfo("nightly", "host-a", 7, at, at.plusSeconds(30)),
                new LockInfo("zk-lock", "host-b", 4_294_967_296_123L * 1000, at, at.plusSeconds(30))));
        List<String> lines = s.toString().lines().toList();
        assertThat(lines).hasSize(3);
        // SINCE starts at the same column on every line, and the fences end at FENCE's end
        int since = lines.get(0).indexOf("SINCE");
        for (String line : lines.subList(1, 3)) {
            assertThat(line.indexOf("2026-11-26T17:00:00.123Z")).as(line).isEqualTo(since);
        }
        int fenceEnd = lines.get(0).indexOf("FENCE") + "FENCE".length();
        assertThat(lines.get(1).substring(0, fenceEnd)).endsWith(" 7");
        assertThat(lines.get(2).substring(0, fenceEnd)).endsWith("4294967296123000");
    }
}
