package dev.turnstile.spi;

import java.time.Instant;

/**
 * A store that can tell the time by its own clock: the one its leases' times are read by (the SQL
 * stores' database, the Redis or MongoDB server; on a Redis Cluster, one node's; on Redlock, the
 * median of its nodes'). For people comparing times (the
 * console shows it beside its own clock, and counts "time left" by it); nothing in the locking
 * depends on it.
 */
public interface StoreClock extends StoreCapability {

    /**
     * Reads the store's clock: one round trip.
     *
     * @return the store's current time, to the millisecond
     * @throws dev.turnstile.StoreUnavailableException if the store cannot be reached
     */
    Instant now();
}
