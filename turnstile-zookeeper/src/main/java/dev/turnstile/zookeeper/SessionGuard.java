package dev.turnstile.zookeeper;

import dev.turnstile.StoreUnavailableException;
import dev.turnstile.spi.LeaseProof;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ZooKeeper session as the proof of the held leases: a lease node is ephemeral, so the lease
 * lives exactly as long as the session, and a holder may only trust its lease as long as it can
 * prove the session alive.
 *
 * <p>A held lease is proven only until the send time of the last answered request plus the session
 * timeout, less a margin for the two clocks' rates ({@link #proofLimit}); the lease's local
 * deadline is never later. While leases are held the guard keeps that send time recent (a cheap
 * request every quarter of the session timeout, {@link #prove}) and moves the limit on after each
 * answer. RECONNECTED in the same session proves the session at once; LOST, or a reconnection in a
 * new session, ends every lease at once, and so does {@link #end} when the store closes its own
 * client.
 */
final class SessionGuard {
    private static final Logger log = LoggerFactory.getLogger(SessionGuard.class);

    private final CuratorFramework client;
    private final long configuredSessionTimeoutMs;
    /** The heartbeat's thread. */
    private final ScheduledExecutorService thread;
    private final BooleanSupplier storeClosed;
    /** Forgets what the store kept of the session's ephemeral nodes (its leases' nodes, its places in line). */
    private final Runnable forgetNodes;
    private volatile ConnectionState state = ConnectionState.CONNECTED;
    /** The held leases' proofs, by token. */
    private final Map<String, LeaseProof> proofs = new ConcurrentHashMap<>();
    /**
     * When (nanoTime) the latest request that got an answer was sent: the server heard from this
     * session then, so it cannot expire it before that plus the session timeout.
     */
    private final AtomicLong lastContact = new AtomicLong(System.nanoTime());
    /** The {@link #lastContact} last handed to the held leases as their proof limit (see {@link #contact}). */
    private final AtomicLong publishedContact = new AtomicLong();
    /** The session the held leases' nodes belong to (0 before the first connection). */
    private volatile long sessionId;
    /** Whether the client ever had a session, which a close must then end on the server. */
    private volatile boolean everConnected;

    SessionGuard(CuratorFramework client, long configuredSessionTimeoutMs, ScheduledExecutorService thread,
            BooleanSupplier storeClosed, Runnable forgetNodes) {
        this.client = client;
        this.configuredSessionTimeoutMs = configuredSessionTimeoutMs;
        this.thread = thread;
        this.storeClosed = storeClosed;
        this.forgetNodes = forgetNodes;
        long beat = Math.max(50, sessionTimeoutMs() / 4);
        // runs until the store shuts its thread down
        ScheduledFuture<?> unused = thread.scheduleWithFixedDelay(this::prove, beat, beat, TimeUnit.MILLISECONDS);
    }

    /** Curator's connection state listener. */
    void stateChanged(CuratorFramework c, ConnectionState newState) {
        state = newState;
        switch (newState) {
            case SUSPENDED -> {
                long limit = proofLimit();
                proofs.values().forEach(p -> p.provenUntil(limit));
            }
            case LOST -> end("the ZooKeeper session was lost (expired, or the connection stayed down past its timeout)");
            case CONNECTED, RECONNECTED -> {
                everConnected = true;
                long id = currentSessionId();
                if (sessionId != 0 && id != sessionId) {
                    end("the ZooKeeper session expired: the client reconnected in a new session");
                } else if (!proofs.isEmpty()) {
                    // Still the leases' session: prove it now rather than at the next beat, so a long
                    // suspension does not leave the leases with a limit about to pass.
                    try {
                        thread.execute(this::prove);
                    } catch (RejectedExecutionException closing) {
                        // the store is closing
                    }
                }
                sessionId = id;
            }
            default -> { }
        }
    }

    /** The session has ended (or will): the server drops every ephemeral node of it, so every lease is lost now. */
    void end(String reason) {
        forgetNodes.run();
        List<LeaseProof> all = new ArrayList<>(proofs.values());
        proofs.clear();
        all.forEach(p -> p.lost(reason));
    }

    /** Whether the connection is up (not suspended, not lost). */
    boolean isConnected() {
        ConnectionState s = state;
        return s != ConnectionState.SUSPENDED && s != ConnectionState.LOST;
    }

    /**
     * While the session is not proven alive, a lease cannot be renewed; once it is lost, never.
     *
     * @throws StoreUnavailableException if the connection is suspended or lost
     */
    void check(String what, String description) {
        ConnectionState s = state;
        if (s == ConnectionState.SUSPENDED || s == ConnectionState.LOST) {
            throw new StoreUnavailableException(what + " on " + description + " failed: the ZooKeeper connection is "
                    + s.name().toLowerCase(Locale.ROOT), null);
        }
    }

    /** The client has (had) a session. */
    void connected() {
        everConnected = true;
    }

    boolean everConnected() {
        return everConnected;
    }

    /**
     * Watches a held lease's proof: its limit now, moved on by every answer in this session, and
     * its loss when the session ends. Returns false (and tells the proof) if the session is lost
     * already.
     */
    boolean watch(String token, LeaseProof proof) {
        proofs.put(token, proof);
        if (state == ConnectionState.LOST) {
            proofs.remove(token, proof);
            proof.lost("the ZooKeeper session was lost");
            return false;
        }
        // Bounded from the start: a process frozen from now on has its lease end locally before the
        // server can expire its session (the heartbeat moves the limit on while it lives).
        proof.provenUntil(proofLimit());
        return true;
    }

    /** Stops watching the proof (the lease ended). */
    void unwatch(String token, LeaseProof proof) {
        proofs.remove(token, proof);
    }

    /** Whether this very proof is still watched for {@code token}. */
    boolean watching(String token, LeaseProof proof) {
        return proofs.get(token) == proof;
    }

    /**
     * A request answered: the session was alive on the server when it was sent. Moves the held
     * leases' proof limit on once it has moved by a sixteenth of the session timeout, so that leases
     * are not called on every request.
     */
    void contact(long sentNanos) {
        long latest = lastContact.accumulateAndGet(sentNanos, (a, b) -> b - a > 0 ? b : a);
        long published = publishedContact.get();
        if (!proofs.isEmpty() && latest - published > TimeUnit.MILLISECONDS.toNanos(sessionTimeoutMs()) / 16
                && publishedContact.compareAndSet(published, latest)) {
            publishProofLimit();
        }
    }

    /** As {@link #contact}, for a request that created a lease node: its session is the leases' session. */
    void contacted(long sentNanos) {
        contact(sentNanos);
        if (sessionId == 0) {
            sessionId = currentSessionId();
        }
    }

    /** The session timeout less a margin for the two clocks' rates: how long one answer vouches for the session. */
    long sessionBoundNanos() {
        long timeout = TimeUnit.MILLISECONDS.toNanos(sessionTimeoutMs());
        return timeout - Math.max(timeout / 10, TimeUnit.MILLISECONDS.toNanos(20));
    }

    /** The negotiated session timeout, or the configured one before the first connection. */
    long sessionTimeoutMs() {
        int negotiated = client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
        return negotiated > 0 ? negotiated : configuredSessionTimeoutMs;
    }

    private long proofLimit() {
        return lastContact.get() + sessionBoundNanos();
    }

    private long currentSessionId() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    /**
     * Hands every held lease the limit of its proof ({@link #proofLimit}). Only while the client is
     * still in the leases' session: after an expiry the state listener ends them instead, and an
     * answer in a new session proves nothing about the old one.
     */
    private void publishProofLimit() {
        if (sessionId != 0 && currentSessionId() != sessionId) {
            return;
        }
        long limit = proofLimit();
        proofs.values().forEach(p -> p.provenUntil(limit));
    }

    /**
     * The heartbeat: keeps {@link #lastContact} recent while leases are held, and so their deadlines
     * ahead.
     */
    private void prove() {
        if (proofs.isEmpty() || storeClosed.getAsBoolean() || !isConnected()) {
            return;
        }
        long t0 = System.nanoTime();
        try {
            client.checkExists().forPath("/");
            lastContact.accumulateAndGet(t0, (a, b) -> b - a > 0 ? b : a);
            publishedContact.set(lastContact.get());
            publishProofLimit();
        } catch (Exception e) {
            log.debug("session heartbeat failed: {}", e.toString());
        }
    }
}
