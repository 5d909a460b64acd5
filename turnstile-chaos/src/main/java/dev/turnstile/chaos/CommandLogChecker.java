package dev.turnstile.chaos;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks the append-only log that the commands of {@code turnstile run} write in the CLI chaos runs.
 * Each line is {@code RUN FENCE WALL_NANOS SEQ} (or {@code … end} as the last line of a command that
 * finished): appends to one file are ordered by the kernel, so the file's order is the order in
 * which the commands really wrote, with no clock in the way.
 *
 * <p>Two runs <em>overlap</em> when their lines interleave: one wrote after the other had begun and
 * before the other's last line. A command writes every 25 ms, so an overlap shorter than that can
 * go unseen; one that did work while another held the lock cannot.
 */
final class CommandLogChecker {
    private CommandLogChecker() {}

    /** One command's lines: where in the log they start and end, with their fence and times. */
    record Run(String id, long fence, int first, int last, long firstNanos, long lastNanos, boolean finished) {}

    /**
     * What the log shows.
     *
     * @param runs every command that wrote, in order of their first line
     * @param overlaps pairs of runs whose lines interleave, as "A/B" with how many lines of the
     *     older run came after the newer one's first
     * @param staleLines lines written with a fence lower than one already seen in the log: the
     *     writes a fenced resource would reject
     * @param fenceDisorder runs whose fence is not greater than the one before them
     * @param malformed lines that could not be read
     */
    record Result(List<Run> runs, List<String> overlaps, int staleLines, List<String> fenceDisorder, int malformed) {}

    static Result check(List<String> lines) {
        Map<String, Run> runs = new LinkedHashMap<>();
        int malformed = 0;
        int stale = 0;
        long highestFence = -1;
        List<String[]> parsed = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String[] f = lines.get(i).trim().split(" ");
            if (f.length != 4) {
                malformed++;
                parsed.add(null);
                continue;
            }
            long fence;
            long nanos;
            try {
                fence = Long.parseLong(f[1]);
                nanos = Long.parseLong(f[2]);
            } catch (NumberFormatException e) {
                malformed++;
                parsed.add(null);
                continue;
            }
            parsed.add(f);
            if (fence < highestFence) {
                stale++;
            }
            highestFence = Math.max(highestFence, fence);
            Run before = runs.get(f[0]);
            boolean end = f[3].equals("end");
            runs.put(f[0], before == null
                    ? new Run(f[0], fence, i, i, nanos, nanos, end)
                    : new Run(f[0], before.fence(), before.first(), i, before.firstNanos(), nanos, end));
        }
        List<Run> ordered = new ArrayList<>(runs.values());
        List<String> overlaps = new ArrayList<>();
        List<String> disorder = new ArrayList<>();
        for (int a = 0; a < ordered.size(); a++) {
            Run older = ordered.get(a);
            if (a > 0 && older.fence() <= ordered.get(a - 1).fence()) {
                disorder.add(ordered.get(a - 1).id() + "(" + ordered.get(a - 1).fence() + ") then " + older.id() + "(" + older.fence() + ")");
            }
            for (int b = a + 1; b < ordered.size(); b++) {
                Run newer = ordered.get(b);
                if (newer.first() > older.last()) {
                    break; // runs are ordered by first line: no later one can start inside the older either
                }
                int after = 0;
                for (int i = newer.first(); i <= older.last(); i++) {
                    String[] f = parsed.get(i);
                    if (f != null && f[0].equals(older.id())) {
                        after++;
                    }
                }
                overlaps.add(older.id() + "/" + newer.id() + " (" + after + " lines)");
            }
        }
        return new Result(ordered, overlaps, stale, disorder, malformed);
    }
}
