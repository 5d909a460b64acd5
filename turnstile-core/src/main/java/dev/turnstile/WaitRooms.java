package dev.turnstile;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Wakes this process's waiters on a lock name when a lease on that name is released here, so a
 * hand-off inside one JVM does not wait for the next poll. Releases cost one map lookup when nobody
 * waits.
 */
final class WaitRooms {
    private final ConcurrentHashMap<String, Room> rooms = new ConcurrentHashMap<>();

    private static final class Room {
        int waiters;
        long generation;
    }

    /** Enters the room for a name; pair with {@link #leave}. Returns the generation seen. */
    long enter(String name) {
        Room room = rooms.compute(name, (k, r) -> {
            Room x = r != null ? r : new Room();
            synchronized (x) {
                x.waiters++;
            }
            return x;
        });
        synchronized (room) {
            return room.generation;
        }
    }

    void leave(String name) {
        rooms.computeIfPresent(name, (k, r) -> {
            synchronized (r) {
                return --r.waiters == 0 ? null : r;
            }
        });
    }

    /** Waits until a release of {@code name} after generation {@code seen}, or the timeout. */
    long await(String name, long seen, long nanos) throws InterruptedException {
        Room room = rooms.get(name);
        if (room == null) {
            throw new IllegalStateException("await outside enter/leave");
        }
        synchronized (room) {
            long deadline = System.nanoTime() + nanos;
            while (room.generation == seen) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                room.wait(left / 1_000_000, (int) (left % 1_000_000));
            }
            return room.generation;
        }
    }

    void signal(String name) {
        Room room = rooms.get(name);
        if (room != null) {
            synchronized (room) {
                room.generation++;
                room.notifyAll();
            }
        }
    }
}
