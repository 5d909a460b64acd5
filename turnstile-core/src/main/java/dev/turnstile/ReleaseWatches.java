package dev.turnstile;

import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.NotifiesReleases;
import dev.turnstile.spi.ReleaseWatch;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This client's subscriptions to the store's release notifications, one per lock name, shared by
 * every waiter on that name and kept open for a while after the last one leaves.
 *
 * <p>Why keep them: a process that takes the same lock again and again (a worker loop, a hand-off
 * between processes) would otherwise subscribe and unsubscribe on every wait, and, worse, would be
 * deaf during the hand-off courtesy that follows its own release, which is exactly when the next
 * release elsewhere is what it waits for: it would sleep out the whole courtesy while the lock
 * lies free.
 */
final class ReleaseWatches {
    private static final Logger log = LoggerFactory.getLogger(ReleaseWatches.class);

    private final LockStore store;
    private final LeaseKeeper keeper;
    private final BiConsumer<String, String> onRelease;
    private final long lingerNanos;
    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

    /** One name's subscription. Its fields are guarded by the entry itself. */
    private static final class Entry {
        @Nullable ReleaseWatch watch; // null until subscribed
        int users;
        /** When users last dropped to 0. */
        long idleSince;
        /** Whether an idle check is pending: at most one per entry, not one per wait. */
        boolean checkPending;
        boolean removed;
    }

    /** A waiter's share of a subscription; close it when the wait ends. */
    final class Handle implements AutoCloseable {
        private final String name;
        private final Entry entry;
        private final boolean notifies;
        private boolean closed;

        /** Caller holds entry's lock, and entry is subscribed. */
        private Handle(String name, Entry entry) {
            this.name = name;
            this.entry = entry;
            this.notifies = entry.watch != ReleaseWatch.NONE;
        }

        /** Whether the store sends notifications for this name (if not, waiters must poll). */
        boolean notifies() {
            return notifies;
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            synchronized (entry) {
                if (--entry.users == 0 && !entry.removed) {
                    entry.idleSince = System.nanoTime();
                    if (!entry.checkPending) {
                        checkIdleLater(name, entry, lingerNanos);
                    }
                }
            }
        }
    }

    /**
     * @param onRelease told (name, released token or null) of every release the store reports
     */
    ReleaseWatches(LockStore store, LeaseKeeper keeper, BiConsumer<String, String> onRelease, long lingerNanos) {
        this.store = store;
        this.keeper = keeper;
        this.onRelease = onRelease;
        this.lingerNanos = lingerNanos;
    }

    /**
     * Joins the subscription on {@code name} if this client has one open (in use or lingering).
     *
     * @return the handle, or null if there is none: call {@link #open} once the lock is busy
     */
    @Nullable Handle joinIfOpen(String name) {
        Entry e = entries.get(name);
        if (e == null) {
            return null;
        }
        synchronized (e) {
            if (e.removed || e.watch == null) {
                return null;
            }
            join(e);
            return new Handle(name, e);
        }
    }

    /**
     * Joins the subscription on {@code name}, subscribing first if there is none. The store call
     * happens under the entry's lock, so concurrent waiters on one name subscribe once.
     *
     * @throws RuntimeException whatever the store's subscribe throws; nothing is kept then
     */
    Handle open(String name) {
        while (true) {
            Entry e = entries.computeIfAbsent(name, k -> new Entry());
            synchronized (e) {
                if (e.removed) {
                    continue; // closed by the linger timer just now: make a fresh one
                }
                if (e.watch == null) {
                    try {
                        e.watch = store.capability(NotifiesReleases.class)
                                .map(notifying -> notifying.watchReleases(name, token -> onRelease.accept(name, token)))
                                .orElse(ReleaseWatch.NONE);
                    } catch (RuntimeException ex) {
                        retire(name, e); // nobody has joined an entry that never subscribed
                        throw ex;
                    }
                }
                join(e);
                return new Handle(name, e);
            }
        }
    }

    /** Closes every subscription now (the client is closing). */
    void closeAll() {
        List<Entry> all = new ArrayList<>(entries.values());
        entries.clear();
        for (Entry e : all) {
            synchronized (e) {
                e.removed = true;
                closeQuietly(e);
            }
        }
    }

    /**
     * Caller holds e's lock. A pending idle check is left to run: a client that waits on a name
     * over and over would otherwise schedule and cancel a timer, and wake the timer thread, on
     * every wait.
     */
    private static void join(Entry e) {
        e.users++;
    }

    /** Caller holds e's lock. */
    private void checkIdleLater(String name, Entry e, long delayNanos) {
        try {
            // Closing talks to the store: off the timer thread, which must stay free for deadlines.
            // Nothing waits for the check: closeIfIdle handles its own failures.
            ScheduledFuture<?> unused = keeper.schedule(() -> keeper.execute(() -> closeIfIdle(name, e)), delayNanos);
            e.checkPending = true;
        } catch (RejectedExecutionException closing) {
            retire(name, e); // the client closed while this waiter was leaving
        }
    }

    /** Closes the subscription if nobody has used it for the linger; else looks again when they may have. */
    private void closeIfIdle(String name, Entry e) {
        synchronized (e) {
            e.checkPending = false;
            if (e.users > 0 || e.removed) {
                return; // the last user to leave schedules the next check
            }
            long idle = System.nanoTime() - e.idleSince;
            if (idle >= lingerNanos) {
                retire(name, e);
            } else {
                checkIdleLater(name, e, lingerNanos - idle);
            }
        }
    }

    /** Caller holds e's lock. */
    private void retire(String name, Entry e) {
        e.removed = true;
        entries.remove(name, e);
        closeQuietly(e);
    }

    private static void closeQuietly(Entry e) {
        if (e.watch != null) {
            try {
                e.watch.close();
            } catch (RuntimeException ex) {
                log.debug("closing a release subscription failed", ex);
            }
        }
    }
}
