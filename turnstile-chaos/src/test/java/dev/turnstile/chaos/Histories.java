package dev.turnstile.chaos;

import dev.turnstile.chaos.FencedResource.LogRow;
import java.util.ArrayList;
import java.util.List;

/** Hand-made histories for the checker tests; times in milliseconds from an arbitrary origin. */
final class Histories {
    private final List<Event> events = new ArrayList<>();
    private final List<LogRow> log = new ArrayList<>();
    private long seq;

    static long ns(long ms) {
        return 1_000_000_000L + ms * 1_000_000L;
    }

    private Histories add(long atMs, int worker, String type, long fence, String outcome, String detail) {
        events.add(new Event(ns(atMs), atMs, worker, type, fence, outcome, detail));
        return this;
    }

    Histories acquired(int worker, long fence, long atMs) {
        return add(atMs, worker, Event.ACQUIRED, fence, null, null);
    }

    /** A write the workers saw; an accepted one also goes into the resource's log. */
    Histories write(int worker, long fence, String outcome, long atMs) {
        if (Event.ACCEPTED.equals(outcome)) {
            log.add(new LogRow(++seq, fence, worker, 1, ns(atMs)));
        }
        return add(atMs, worker, Event.WRITE, fence, outcome, "phase 1");
    }

    /** A write event only (its log row was added earlier with {@link #logRow}: a worker that recorded its write late). */
    Histories writeEvent(int worker, long fence, String outcome, long atMs) {
        return add(atMs, worker, Event.WRITE, fence, outcome, "phase 1");
    }

    /** A row in the resource's log only (to fake a resource that broke its own rule). */
    Histories logRow(int worker, long fence, long atMs) {
        log.add(new LogRow(++seq, fence, worker, 1, ns(atMs)));
        return this;
    }

    Histories lost(int worker, long fence, long atMs) {
        return add(atMs, worker, Event.LOST, fence, null, "its local deadline passed without a confirmed renewal");
    }

    /** A release call at {@code atMs} and its outcome 2 ms later. */
    Histories release(int worker, long fence, long atMs, String outcome) {
        add(atMs, worker, Event.RELEASE_CALL, fence, null, null);
        return add(atMs + 2, worker, Event.RELEASE, fence, outcome, null);
    }

    /** A whole uneventful round: acquire, two accepted writes, release. */
    Histories round(int worker, long fence, long fromMs, long toMs) {
        acquired(worker, fence, fromMs);
        write(worker, fence, Event.ACCEPTED, fromMs + 1);
        write(worker, fence, Event.ACCEPTED, toMs - 1);
        return release(worker, fence, toMs, "RELEASED");
    }

    Histories harness(String type, int worker, long atMs) {
        return add(atMs, worker, type, -1, null, null);
    }

    Histories harnessDetail(String type, int worker, long atMs, String detail) {
        return add(atMs, worker, type, -1, null, detail);
    }

    Histories error(int worker, String detail, long atMs) {
        return add(atMs, worker, Event.ERROR, -1, null, detail);
    }

    History build() {
        return History.of(events, log);
    }
}
