package dev.turnstile;

import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * This process's waiters on each lock name. They stand in line: only the first asks the store, the
 * others wait for their turn, so a release here wakes one thread into a store call rather than a
 * race of every waiting thread (the losers' calls only load the store and the CPU). The first in
 * line is woken when a lease on the name is released here or the store reports a release, so a
 * hand-off does not wait for the next poll. Releases cost one map lookup when nobody waits, and
 * wake one thread when some do: a waiter parks, and only the thread whose turn or release it is is
 * unparked. On a store that can, a releasing thread hands its lock straight to the first in line
 * ({@link #claimFirst}, then {@link #deliver} or {@link #withdraw}), which then needs no store call
 * of its own.
 */
final class WaitRooms {
    private final ConcurrentHashMap<String, Room> rooms = new ConcurrentHashMap<>();
    /** Set when the client closes: every wait ends at once (a seat being handed a lock still waits for the outcome). */
    private volatile boolean closed;

    /** The waiters on one name. Guarded by its own monitor. */
    private static final class Room {
        final ArrayDeque<Seat> line = new ArrayDeque<>();
        /** Counts releases; a waiter sleeps until it moves on from the value it has seen. */
        long generation;
        /** The generation at which the last first-in-line left holding the lock; -1 if it left without. */
        long takenAt = -1;
    }

    /** One waiting thread's place in the line for a name; pair {@link #enter} with {@link #leave}. */
    static final class Seat {
        private final Room room;
        private final Thread thread = Thread.currentThread();
        private final boolean firstAtOnce;
        private final LockOptions options;
        private long seen;
        private boolean takenAhead;
        // Guarded by room: a hand-over from a releasing thread of this client.
        private boolean waitingForRelease;
        private boolean offered;
        private @Nullable HeldLease handed;

        private final WaitRooms rooms;

        private Seat(WaitRooms rooms, Room room, boolean firstAtOnce, LockOptions options) {
            this.rooms = rooms;
            this.room = room;
            this.firstAtOnce = firstAtOnce;
            this.options = options;
        }

        /** The options this waiter asked for, for a lease handed over to it. */
        LockOptions options() {
            return options;
        }

        /** The lease a releasing thread handed over to this waiter during its last {@link #await}, if any (once). */
        @Nullable HeldLease takeHanded() {
            synchronized (room) {
                HeldLease h = handed;
                handed = null;
                return h;
            }
        }

        /** Whether nobody was in line ahead of this seat when it came. */
        boolean firstAtOnce() {
            return firstAtOnce;
        }

        /**
         * Whether the waiter ahead left the line holding the lock and has not released it since
         * this seat's turn came: asking the store now would only find it busy.
         */
        boolean takenAhead() {
            return takenAhead;
        }

        /** The release count when this seat's turn came (or when it came, if first at once). */
        long seen() {
            return seen;
        }

        /**
         * Waits until this seat is first in line.
         *
         * @param deadline {@link System#nanoTime()} at which to give up
         * @return whether its turn came before the deadline (false, too, once the client closed)
         */
        boolean awaitTurn(long deadline) throws InterruptedException {
            while (true) {
                if (rooms.closed) {
                    return false;
                }
                synchronized (room) {
                    if (room.line.peekFirst() == this) {
                        // A lock taken by the waiter ahead is busy until its release, which bumps
                        // the generation past the one it was taken at.
                        takenAhead = room.takenAt == room.generation;
                        seen = room.generation;
                        return true;
                    }
                }
                if (!park(deadline - System.nanoTime())) {
                    return false;
                }
            }
        }

        /**
         * Waits until a release after generation {@code seen}, or the timeout; returns the
         * generation. Only the first in line waits for releases. Meanwhile a releasing thread of
         * this client may hand its lock over to this waiter ({@link #takeHanded()}); once it has
         * begun, this waits for the outcome whatever the timeout, and an interrupt then waits too
         * (and is thrown after, with a handed lease released).
         */
        long await(long seen, long nanos) throws InterruptedException {
            long deadline = System.nanoTime() + nanos;
            boolean interrupted = false;
            while (true) {
                boolean offer;
                synchronized (room) {
                    offer = offered;
                    if (!offer) {
                        if (interrupted) {
                            waitingForRelease = false;
                            break;
                        }
                        if (handed != null || room.generation != seen || deadline - System.nanoTime() <= 0 || rooms.closed) {
                            waitingForRelease = false;
                            return room.generation;
                        }
                        waitingForRelease = true;
                    }
                }
                if (offer) {
                    LockSupport.park(this); // a hand-over is one store call, bounded by the store's timeouts
                } else {
                    LockSupport.parkNanos(this, deadline - System.nanoTime());
                }
                interrupted |= Thread.interrupted();
            }
            HeldLease h = takeHanded();
            if (h != null) {
                h.release(); // handed over as the interrupt came: nothing may be held when acquire throws
            }
            throw new InterruptedException();
        }

        /** Parks for at most {@code nanos}; false if that time is up. Wakes early when unparked. */
        private static boolean park(long nanos) throws InterruptedException {
            if (nanos <= 0) {
                return false;
            }
            LockSupport.parkNanos(nanos);
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            return true;
        }
    }

    /** Joins the end of the line for a name. */
    Seat enter(String name, LockOptions options) {
        Seat[] seat = new Seat[1];
        rooms.compute(name, (k, r) -> {
            Room x = r != null ? r : new Room();
            synchronized (x) {
                seat[0] = new Seat(this, x, x.line.isEmpty(), options);
                seat[0].seen = x.generation;
                x.line.addLast(seat[0]);
            }
            return x;
        });
        return seat[0];
    }

    /**
     * Picks the first in line to hand a lock over to, if it is waiting for a release (not in a
     * store call of its own, nor already offered one): it then waits for {@link #deliver} or
     * {@link #withdraw}, which the caller must call.
     *
     * @return the seat, or null if there is none to hand over to
     */
    @Nullable Seat claimFirst(String name) {
        Room room = rooms.get(name);
        if (room == null) {
            return null;
        }
        synchronized (room) {
            Seat first = room.line.peekFirst();
            if (first == null || !first.waitingForRelease || first.offered || first.handed != null) {
                return null;
            }
            first.offered = true;
            return first;
        }
    }

    /** Gives a claimed seat the lease handed over to it, and wakes it. */
    void deliver(Seat seat, HeldLease lease) {
        synchronized (seat.room) {
            seat.handed = lease;
            seat.offered = false;
        }
        wake(seat);
    }

    /** Ends a claim without a lease: the seat goes back to waiting for a release. */
    void withdraw(Seat seat) {
        synchronized (seat.room) {
            seat.offered = false;
        }
        wake(seat);
    }

    /**
     * Leaves the line. If the seat was first, the next in line gets its turn: at once if this one
     * leaves without the lock (it gave up, or failed), else at the release of the lock it took.
     */
    void leave(String name, Seat seat, boolean acquired) {
        Seat[] next = new Seat[1];
        rooms.computeIfPresent(name, (k, r) -> {
            synchronized (r) {
                boolean wasFirst = r.line.peekFirst() == seat;
                if (wasFirst) {
                    r.takenAt = acquired ? r.generation : -1;
                }
                r.line.remove(seat);
                next[0] = wasFirst ? r.line.peekFirst() : null;
                return r.line.isEmpty() ? null : r;
            }
        });
        wake(next[0]);
    }

    /** A lease on {@code name} was released (here or, as the store reports, elsewhere): wakes the first in line. */
    void signal(String name) {
        Room room = rooms.get(name);
        if (room != null) {
            Seat first;
            synchronized (room) {
                room.generation++;
                first = room.line.peekFirst();
            }
            wake(first);
        }
    }

    /** The client is closing: wakes every waiter, and later waits return at once. */
    void close() {
        closed = true;
        for (Room room : rooms.values()) {
            synchronized (room) {
                room.line.forEach(WaitRooms::wake);
            }
        }
    }

    private static void wake(Seat seat) {
        if (seat != null) {
            LockSupport.unpark(seat.thread);
        }
    }
}
