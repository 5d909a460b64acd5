package dev.turnstile.chaos;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One line of a history: something a worker did or saw, or a fault the harness injected. Times are
 * {@link System#nanoTime()} values, which on one Linux host come from the same monotonic clock in
 * every process and so order events across the worker JVMs and the harness; {@code wall} is the
 * process's wall clock (milliseconds), for people reading the files (it is faked in clock-jump runs).
 *
 * @param t monotonic time in nanoseconds
 * @param wall wall-clock time in epoch milliseconds, as the recording process saw it
 * @param worker the worker it concerns ({@code -1} for the harness's own, store-wide events)
 * @param type what happened: one of the constants below
 * @param fence the fence it concerns, or {@code -1}
 * @param outcome a result: write {@code accepted}/{@code rejected}/{@code error}, a {@code ReleaseOutcome} name, …
 * @param detail free text: a reason, an error message, a fault parameter
 */
public record Event(long t, long wall, int worker, String type, long fence, String outcome, String detail) {

    // Worker events.
    public static final String START = "start";
    public static final String ACQUIRED = "acquired";
    public static final String BUSY = "busy";
    public static final String WRITE = "write";
    public static final String LOST = "lost";
    public static final String RELEASE_CALL = "release_call";
    public static final String RELEASE = "release";
    public static final String ERROR = "error";
    public static final String EXIT = "exit";

    // Harness events.
    public static final String SPAWN = "spawn";
    public static final String KILL = "kill";
    public static final String PAUSE = "pause";
    public static final String RESUME = "resume";
    public static final String PARTITION = "partition";
    public static final String HEAL = "heal";
    public static final String DELAY_ON = "delay_on";
    public static final String DELAY_OFF = "delay_off";
    public static final String STORE_DOWN = "store_down";
    public static final String STORE_UP = "store_up";
    public static final String NODES_DOWN = "nodes_down";
    public static final String NODES_UP = "nodes_up";
    public static final String CLOCK_JUMP = "clock_jump";
    public static final String DESTROY = "destroy";
    public static final String STOP = "stop";
    public static final String REPLICA_LAG = "replica_lag";

    // Write outcomes.
    public static final String ACCEPTED = "accepted";
    public static final String REJECTED = "rejected";
    public static final String FAILED = "error";

    /** A worker or harness event with no fence, outcome or detail. */
    public static Event of(long t, int worker, String type) {
        return new Event(t, 0, worker, type, -1, null, null);
    }

    /** The event as one JSON object. */
    public String toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("t", t);
        m.put("wall", wall);
        m.put("w", worker);
        m.put("type", type);
        if (fence >= 0) {
            m.put("fence", fence);
        }
        if (outcome != null) {
            m.put("outcome", outcome);
        }
        if (detail != null) {
            m.put("detail", detail);
        }
        return Json.write(m);
    }

    /** Reads a line written by {@link #toJson()}. */
    public static Event fromJson(String line) {
        Map<String, Object> m = Json.parseObject(line);
        return new Event(num(m.get("t")), num(m.get("wall")), (int) num(m.get("w")), (String) m.get("type"),
                m.containsKey("fence") ? num(m.get("fence")) : -1, (String) m.get("outcome"), (String) m.get("detail"));
    }

    private static long num(Object o) {
        return o == null ? 0 : ((Number) o).longValue();
    }

    /** Tells whether this is a write the resource accepted. */
    public boolean accepted() {
        return WRITE.equals(type) && ACCEPTED.equals(outcome);
    }

    /** Tells whether this is a write the resource rejected for a stale fence. */
    public boolean rejected() {
        return WRITE.equals(type) && REJECTED.equals(outcome);
    }
}
