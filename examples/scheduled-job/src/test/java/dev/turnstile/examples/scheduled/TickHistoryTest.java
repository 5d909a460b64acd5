package dev.turnstile.examples.scheduled;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.examples.scheduled.AppInstance.Tick;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checker must reject each way a run can go wrong, or the three-instance test proves nothing. */
class TickHistoryTest {

    /** Ticks 100..105 by A (fences 1..6), A killed during 105, B from 108 to 112. */
    private static List<Tick> good() {
        List<Tick> t = new ArrayList<>();
        for (int s = 100; s <= 105; s++) {
            t.add(new Tick(s, "A", s - 99, 0));
        }
        for (int s = 108; s <= 112; s++) {
            t.add(new Tick(s, s % 2 == 0 ? "B" : "C", s - 99, 0));
        }
        return t;
    }

    @Test
    void aGoodRunPasses() {
        assertThat(new TickHistory(good()).check(100, "A", 105, 3, 3)).contains("2 tick(s) not run", "took over at tick 108");
    }

    @Test
    void aTickTwiceFails() {
        List<Tick> t = good();
        t.add(new Tick(103, "C", 50, 0));
        assertThatThrownBy(() -> new TickHistory(t).check(100, "A", 105, 3, 3)).hasMessageContaining("more than once: [103");
    }

    @Test
    void aLostTickBeforeTheKillFails() {
        List<Tick> t = good();
        t.removeIf(x -> x.second() == 102);
        assertThatThrownBy(() -> new TickHistory(t).check(100, "A", 105, 3, 3)).hasMessageContaining("lost before the kill (all instances up): [102]");
    }

    @Test
    void aLostTickAfterTheTakeOverFails() {
        List<Tick> t = good();
        t.removeIf(x -> x.second() == 110);
        assertThatThrownBy(() -> new TickHistory(t).check(100, "A", 105, 3, 3)).hasMessageContaining("after the take-over: [110]");
    }

    @Test
    void aGapLongerThanTheTtlFails() {
        List<Tick> t = good();
        t.removeIf(x -> x.second() == 108 || x.second() == 109);
        assertThatThrownBy(() -> new TickHistory(t).check(100, "A", 105, 3, 3)).hasMessageContaining("4 ticks lost after the kill");
    }

    @Test
    void aFenceThatDoesNotGrowFails() {
        List<Tick> t = good();
        t.replaceAll(x -> x.second() == 111 ? new Tick(111, "C", 2, 0) : x);
        assertThatThrownBy(() -> new TickHistory(t).check(100, "A", 105, 3, 3)).hasMessageContaining("tick 111 ran with fence 2");
    }

    @Test
    void theKilledInstanceRunningLaterFails() {
        List<Tick> t = good();
        t.replaceAll(x -> x.second() == 111 ? new Tick(111, "A", 12, 0) : x);
        assertThatThrownBy(() -> new TickHistory(t).check(100, "A", 105, 3, 3)).hasMessageContaining("killed instance ran tick 111");
    }

    @Test
    void noTakeOverFails() {
        List<Tick> t = good();
        t.removeIf(x -> x.second() > 105);
        assertThatThrownBy(() -> new TickHistory(t).check(100, "A", 105, 3, 3)).hasMessageContaining("no survivor took over");
    }
}
