package dev.turnstile.spi;

import java.time.Duration;

/**
 * A store whose leases also end with a client session (ZooKeeper): the server can end a lease a
 * session timeout after it last heard from the client, whatever the TTL. Such a store bounds every
 * lease's local deadline through {@link #watchLease}, so {@link dev.turnstile.Lease#timeLeft()}
 * never exceeds {@link #sessionBound()}.
 */
public interface SessionBoundLeases extends WatchesLeases {

    /**
     * How long after its last answer from the server this store can still vouch for a lease it
     * granted (ZooKeeper: the negotiated session timeout less a margin). A caller that must act a
     * fixed time before a lease can end (the CLI's guard stops its command a grace period before the
     * deadline) fits that time into this bound as into the TTL.
     *
     * @return the bound, positive
     */
    Duration sessionBound();
}
