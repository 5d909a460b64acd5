package dev.turnstile.spi;

/**
 * Something a {@link LockStore} can do beyond the operations every store has. A store says what it
 * can do by implementing the capability's interface; the core asks for it by type with
 * {@link LockStore#capability(Class)}, and the contract suite ({@code LockStoreContract}) runs the
 * tests of every capability a store declares, so no capability is claimed untested.
 *
 * <ul>
 *   <li>{@link NotifiesReleases}: tells of releases (Redis pub/sub, ZooKeeper watches), so waiters
 *       need not poll often;</li>
 *   <li>{@link WatchesLeases}: tells a holder at once that its lease may have ended for a reason other
 *       than its TTL (a forced release on PostgreSQL or ZooKeeper, the end of a ZooKeeper session);</li>
 *   <li>{@link SessionBoundLeases}: leases also end with a client session (ZooKeeper);</li>
 *   <li>{@link KeepsWaitingLine}: a waiting acquire holds a place in line on the store that must be
 *       given up when the wait ends (ZooKeeper);</li>
 *   <li>{@link HandsOver}: a release can grant the lock to the next waiter of the same client in the
 *       same step (Redis);</li>
 *   <li>{@link StoreClock}: reads the store's own clock (the SQL stores, Redis), for people
 *       comparing times;</li>
 *   <li>{@link PrunesNames}: forgets the names nobody has used for a while, every later fence still
 *       above every earlier one (the SQL stores, MongoDB, Redis).</li>
 * </ul>
 */
public interface StoreCapability {}
