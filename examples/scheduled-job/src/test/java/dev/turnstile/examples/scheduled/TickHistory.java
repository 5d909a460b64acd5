package dev.turnstile.examples.scheduled;

import dev.turnstile.examples.scheduled.AppInstance.Tick;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The checker of the three-instance run: from every instance's {@code TICK} lines, proves each tick
 * ran exactly once. Kept apart from the processes so its own test can feed it bad histories.
 */
final class TickHistory {
    private final List<Tick> ticks;

    TickHistory(List<Tick> ticks) {
        this.ticks = List.copyOf(ticks);
    }

    /**
     * Checks the history of a run in which {@code killed} was SIGKILLed while it ran tick
     * {@code killedTick}:
     * <ol>
     *   <li>no tick id ran twice, anywhere, warm-up included;</li>
     *   <li>from {@code steadyFrom} (all instances up) to the killed tick, and from the first tick
     *       after it to the end, every second has its tick (none lost);</li>
     *   <li>at most {@code maxLostAfterKill} ticks are missing after the killed tick (those whose
     *       attempts fell while the dead holder's lease ran out its lockAtMostFor);</li>
     *   <li>the ticks after the kill come from survivors, with fences above the killed run's.</li>
     * </ol>
     *
     * @return what happened, for the test's output
     * @throws AssertionError naming the offending ticks
     */
    String check(long steadyFrom, String killed, long killedTick, int maxLostAfterKill, int minTicksAfterTakeOver) {
        Map<Long, List<Tick>> bySecond = ticks.stream()
                .collect(Collectors.groupingBy(Tick::second, TreeMap::new, Collectors.toList()));
        List<String> twice = new ArrayList<>();
        bySecond.forEach((second, runs) -> {
            if (runs.size() > 1) {
                twice.add(second + " by " + runs.stream().map(r -> r.instance() + "/fence " + r.fence()).toList());
            }
        });
        if (!twice.isEmpty()) {
            throw new AssertionError("ticks that ran more than once: " + twice + "\n" + this);
        }
        Tick killedRun = bySecond.containsKey(killedTick) ? bySecond.get(killedTick).get(0) : null;
        if (killedRun == null || !killedRun.instance().equals(killed)) {
            throw new AssertionError("the killed instance " + killed + " did not run tick " + killedTick + "\n" + this);
        }
        List<Long> lostBefore = missing(bySecond, steadyFrom, killedTick);
        if (!lostBefore.isEmpty()) {
            throw new AssertionError("ticks lost before the kill (all instances up): " + lostBefore + "\n" + this);
        }
        List<Tick> after = ticks.stream().filter(t -> t.second() > killedTick)
                .sorted(java.util.Comparator.comparingLong(Tick::second)).toList();
        if (after.size() < minTicksAfterTakeOver) {
            throw new AssertionError("only " + after.size() + " ticks after the kill; expected at least "
                    + minTicksAfterTakeOver + ": no survivor took over?\n" + this);
        }
        Tick first = after.get(0);
        long lostAfterKill = first.second() - killedTick - 1;
        if (lostAfterKill > maxLostAfterKill) {
            throw new AssertionError(lostAfterKill + " ticks lost after the kill, more than the " + maxLostAfterKill
                    + " the killed holder's lockAtMostFor covers\n" + this);
        }
        List<Long> lostAfter = missing(bySecond, first.second(), after.get(after.size() - 1).second());
        if (!lostAfter.isEmpty()) {
            throw new AssertionError("ticks lost after the take-over: " + lostAfter + "\n" + this);
        }
        long previousFence = killedRun.fence();
        for (Tick t : after) {
            if (t.instance().equals(killed)) {
                throw new AssertionError("the killed instance ran tick " + t.second() + "\n" + this);
            }
            if (t.fence() <= previousFence) {
                throw new AssertionError("tick " + t.second() + " ran with fence " + t.fence() + ", not above "
                        + previousFence + "\n" + this);
            }
            previousFence = t.fence();
        }
        return "killed " + killed + " during tick " + killedTick + " (fence " + killedRun.fence() + "); "
                + lostAfterKill + " tick(s) not run while its lease ran out; " + first.instance() + " took over at tick "
                + first.second() + " (fence " + first.fence() + "); " + ticks.size() + " ticks, none twice";
    }

    private static List<Long> missing(Map<Long, List<Tick>> bySecond, long from, long to) {
        List<Long> lost = new ArrayList<>();
        for (long s = from; s <= to; s++) {
            if (!bySecond.containsKey(s)) {
                lost.add(s);
            }
        }
        return lost;
    }

    @Override
    public String toString() {
        return ticks.stream().sorted(java.util.Comparator.comparingLong(Tick::second))
                .map(t -> "  TICK " + t.second() + " " + t.instance() + " " + t.fence())
                .collect(Collectors.joining("\n", "history:\n", ""));
    }
}
