package dev.turnstile.chaos;

import dev.turnstile.chaos.FencedResource.LogRow;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * The merged history of a run: every worker's events and the harness's fault events, ordered by the
 * shared monotonic clock, plus the resource's log of accepted writes. The checkers read it.
 */
public final class History {
    private static final Set<String> HARNESS = Set.of(Event.SPAWN, Event.KILL, Event.PAUSE, Event.RESUME, Event.PARTITION,
            Event.HEAL, Event.DELAY_ON, Event.DELAY_OFF, Event.STORE_DOWN, Event.STORE_UP, Event.NODES_DOWN,
            Event.NODES_UP, Event.CLOCK_JUMP, Event.DESTROY, Event.STOP, Event.REPLICA_LAG);

    /**
     * One hold: from the moment {@code acquire} returned a lease to the earlier of the release call
     * and the loss notification (or the worker's death).
     *
     * @param worker the holder
     * @param fence its fence
     * @param start when acquire returned
     * @param end when the holder stopped believing it held the lock
     * @param lostAt when it recorded the loss notification, or {@code -1}
     * @param releaseCallAt when it called release, or {@code -1}
     * @param releaseOutcome the release outcome ({@code ReleaseOutcome} name or {@code error}), or {@code null}
     * @param killed the worker was SIGKILLed while holding
     * @param destroyed the harness had to kill the worker at the end of the run while holding
     */
    public record Hold(int worker, long fence, long start, long end, long lostAt, long releaseCallAt,
            String releaseOutcome, boolean killed, boolean destroyed) {

        /** Tells whether the holder still believed it held the lock at {@code t}. */
        public boolean covers(long t) {
            return start <= t && t < end;
        }

        /** The hold's length in milliseconds. */
        public double millis() {
            return (end - start) / 1e6;
        }
    }

    private final List<Event> events;
    private final List<LogRow> log;
    private List<Hold> holds;

    private History(List<Event> events, List<LogRow> log) {
        List<Event> sorted = new ArrayList<>(events);
        sorted.sort(Comparator.comparingLong(Event::t));
        this.events = List.copyOf(sorted);
        this.log = List.copyOf(log);
    }

    /**
     * A history from events and a resource log (tests build them by hand).
     *
     * @param events worker and harness events, in any order
     * @param log the resource's accepted writes, in commit order
     * @return the history
     */
    public static History of(List<Event> events, List<LogRow> log) {
        return new History(events, log);
    }

    /**
     * Reads every {@code *.jsonl} event file in a run directory.
     *
     * @param dir the run directory
     * @param log the resource's log
     * @return the history
     */
    public static History load(Path dir, List<LogRow> log) {
        List<Event> all = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            files.filter(p -> p.getFileName().toString().endsWith(".jsonl")).sorted().forEach(p -> all.addAll(EventLog.read(p)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new History(all, log);
    }

    /** Tells whether an event was recorded by the harness (a fault) rather than by a worker. */
    public static boolean isHarnessEvent(Event e) {
        return HARNESS.contains(e.type());
    }

    /** All events, by time. */
    public List<Event> events() {
        return events;
    }

    /** The resource's accepted writes, in commit order. */
    public List<LogRow> log() {
        return log;
    }

    /** Events of one type, by time. */
    public List<Event> ofType(String type) {
        return events.stream().filter(e -> e.type().equals(type)).toList();
    }

    /** Worker events of one worker, by time. */
    public List<Event> ofWorker(int worker) {
        return events.stream().filter(e -> e.worker() == worker && !isHarnessEvent(e)).toList();
    }

    /** The ids of the workers that recorded anything. */
    public Set<Integer> workers() {
        Set<Integer> ids = new TreeSet<>();
        events.stream().filter(e -> !isHarnessEvent(e) && e.worker() >= 0).forEach(e -> ids.add(e.worker()));
        return ids;
    }

    /** Successful acquisitions, by time. */
    public List<Event> acquisitions() {
        return ofType(Event.ACQUIRED);
    }

    /** Every hold of every worker, by start. */
    public synchronized List<Hold> holds() {
        if (holds == null) {
            holds = computeHolds();
        }
        return holds;
    }

    /** The hold a worker had open at {@code t}, if any. */
    public Hold holdAt(int worker, long t) {
        return holds().stream().filter(h -> h.worker() == worker && h.covers(t)).findFirst().orElse(null);
    }

    private List<Hold> computeHolds() {
        Map<Integer, Long> killedAt = new HashMap<>();
        Map<Integer, Long> destroyedAt = new HashMap<>();
        for (Event e : events) {
            if (e.type().equals(Event.KILL)) {
                killedAt.putIfAbsent(e.worker(), e.t());
            } else if (e.type().equals(Event.DESTROY)) {
                destroyedAt.putIfAbsent(e.worker(), e.t());
            }
        }
        List<Hold> out = new ArrayList<>();
        for (int w : workers()) {
            List<Event> mine = ofWorker(w);
            long lastT = mine.isEmpty() ? 0 : mine.get(mine.size() - 1).t();
            List<Builder> mineHolds = new ArrayList<>();
            for (Event e : mine) {
                switch (e.type()) {
                    case Event.ACQUIRED -> mineHolds.add(new Builder(w, e.fence(), e.t()));
                    case Event.LOST -> {
                        Builder b = latest(mineHolds, e.fence());
                        if (b != null && b.lostAt < 0) {
                            b.lostAt = e.t();
                        }
                    }
                    case Event.RELEASE_CALL -> {
                        Builder b = latest(mineHolds, e.fence());
                        if (b != null && b.releaseCallAt < 0) {
                            b.releaseCallAt = e.t();
                        }
                    }
                    case Event.RELEASE -> {
                        Builder b = latest(mineHolds, e.fence());
                        if (b != null && b.outcome == null) {
                            b.outcome = e.outcome();
                        }
                    }
                    default -> { }
                }
            }
            for (Builder b : mineHolds) {
                long end = Long.MAX_VALUE;
                if (b.releaseCallAt >= 0) {
                    end = Math.min(end, b.releaseCallAt);
                }
                if (b.lostAt >= 0) {
                    end = Math.min(end, b.lostAt);
                }
                boolean killed = false;
                boolean destroyed = false;
                Long k = killedAt.get(w);
                if (k != null && k >= b.start && k < end) {
                    end = k;
                    killed = true;
                }
                Long d = destroyedAt.get(w);
                if (d != null && d >= b.start && d < end) {
                    end = d;
                    destroyed = true;
                }
                if (end == Long.MAX_VALUE) {
                    end = Math.max(b.start, lastT); // the file ends while holding: count it held to its last word
                }
                out.add(new Hold(w, b.fence, b.start, end, b.lostAt, b.releaseCallAt, b.outcome, killed, destroyed));
            }
        }
        out.sort(Comparator.comparingLong(Hold::start));
        return List.copyOf(out);
    }

    /** The worker's latest hold with this fence (a loss or release names the fence it concerns). */
    private static Builder latest(List<Builder> holds, long fence) {
        for (int i = holds.size() - 1; i >= 0; i--) {
            if (holds.get(i).fence == fence) {
                return holds.get(i);
            }
        }
        return null;
    }

    private static final class Builder {
        final int worker;
        final long fence;
        final long start;
        long lostAt = -1;
        long releaseCallAt = -1;
        String outcome;

        Builder(int worker, long fence, long start) {
            this.worker = worker;
            this.fence = fence;
            this.start = start;
        }
    }
}
