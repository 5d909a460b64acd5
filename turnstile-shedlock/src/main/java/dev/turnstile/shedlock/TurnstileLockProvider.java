package dev.turnstile.shedlock;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@link ExtensibleLockProvider} backed by Turnstile: an application keeps its
 * {@code @SchedulerLock} annotations and {@code LockingTaskExecutor} calls and swaps its
 * {@code LockProvider} bean for this one, to get Turnstile's stores, owner tokens, store-clock
 * expiry and fences.
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(DataSource dataSource) {
 *     return new TurnstileLockProvider(Turnstile.builder(JdbcLockStore.builder(dataSource).build()).build());
 * }
 * }</pre>
 *
 * <p>Mapping of ShedLock's semantics:
 * <ul>
 *   <li>{@link #lock}: a Turnstile try-acquire of {@code LockConfiguration.getName()} with its
 *       {@code lockAtMostFor} as the lease's TTL, counted by the store's clock (not the
 *       application's, as ShedLock's JDBC provider does by default), and a random owner token, so
 *       only this lock can unlock or extend it. Busy is {@link Optional#empty()}, as ShedLock
 *       expects; an unreachable store throws {@link dev.turnstile.StoreUnavailableException}
 *       (ShedLock's executor then does not run the task and passes the exception on).</li>
 *   <li>{@link SimpleLock#unlock()}: releases, keeping the lock until {@code lockAtLeastFor} after
 *       the acquire if that is still ahead; a lock already expired or taken over is logged at WARN
 *       and left alone (never another holder's).</li>
 *   <li>{@link SimpleLock#extend(Duration, Duration)}: an owner-checked extend of the same lease
 *       (same fence) to {@code lockAtMostFor} from now; empty if the lock has expired. The new
 *       {@code lockAtLeastFor} counts from the extend, as ShedLock documents. After a successful
 *       extend the old {@code SimpleLock} is invalid ({@link IllegalStateException}), as in
 *       ShedLock.</li>
 *   <li>The fence: the returned locks are {@link TurnstileSimpleLock}s ({@code lease().fence()});
 *       on the thread that took the lock, which is where ShedLock runs the task,
 *       {@link #currentLease()} returns it.</li>
 *   <li>A {@code lockAtMostFor} of zero is refused ({@link IllegalArgumentException}: with ShedLock's
 *       own providers such a lock is free again as it is taken, so it excludes nothing). One
 *       shorter than Turnstile's 10 ms minimum is held for 10 ms in the store, and treated as
 *       expired after the requested time by this process (extend refuses). A lease whose grant
 *       took more than half of it is handed back and tried once more; a second such grant is a
 *       {@link dev.turnstile.StoreUnavailableException} that says to give a longer
 *       {@code lockAtMostFor}: so keep it well above the store's round trip.</li>
 * </ul>
 *
 * <p>Lock names follow Turnstile's rules (1 to 255 Unicode code points, compared in NFC, no control
 * characters, no white space at either end); another name is an {@link IllegalArgumentException}.
 *
 * <p>Not final: override {@link #lockOptions(LockConfiguration)} to change how a lock is held (for
 * example keep-alive, or an {@code onLost} callback), or {@link #newLock} to return your own lock
 * type.
 */
public class TurnstileLockProvider implements ExtensibleLockProvider {
    private static final ThreadLocal<Deque<Lease>> TAKEN_HERE = ThreadLocal.withInitial(ArrayDeque::new);

    private final Turnstile turnstile;

    /**
     * Creates a provider over a lock client.
     *
     * @param turnstile the client; share one per store
     * @throws IllegalArgumentException if null
     */
    public TurnstileLockProvider(Turnstile turnstile) {
        if (turnstile == null) {
            throw new IllegalArgumentException("turnstile is null: give a Turnstile, e.g. Turnstile.builder(store).build()");
        }
        this.turnstile = turnstile;
    }

    /**
     * Creates a provider over a store, with a client of default settings (owner: host, pid and a
     * random id).
     *
     * @param store the store, e.g. {@code JdbcLockStore.builder(dataSource).build()}
     * @throws IllegalArgumentException if null
     */
    public TurnstileLockProvider(LockStore store) {
        this(Turnstile.builder(store).build());
    }

    /**
     * Returns the lock client.
     *
     * @return the client
     */
    public Turnstile turnstile() {
        return turnstile;
    }

    /**
     * Returns the innermost lease this provider granted to the calling thread and that is still
     * held: how a task run by ShedLock reads its fence.
     *
     * <pre>{@code
     * @Scheduled(cron = "0 * * * * *")
     * @SchedulerLock(name = "invoice-run", lockAtMostFor = "10m")
     * void run() {
     *     long fence = TurnstileLockProvider.currentLease().orElseThrow().fence();
     *     invoices.writeBatch(fence);               // the resource rejects smaller fences
     * }
     * }</pre>
     *
     * @return the lease, or empty if this thread holds none taken through a TurnstileLockProvider
     */
    public static Optional<Lease> currentLease() {
        Deque<Lease> taken = TAKEN_HERE.get();
        for (Iterator<Lease> it = taken.iterator(); it.hasNext(); ) {
            Lease lease = it.next();
            if (lease.isHeld()) {
                return Optional.of(lease);
            }
        }
        return Optional.empty();
    }

    @Override
    public Optional<SimpleLock> lock(LockConfiguration lockConfiguration) {
        if (lockConfiguration == null) {
            throw new IllegalArgumentException("lockConfiguration is null: give ShedLock's LockConfiguration for the task");
        }
        long start = System.nanoTime();
        Optional<Lease> lease = turnstile.tryAcquire(lockConfiguration.getName(), lockOptions(lockConfiguration));
        if (lease.isEmpty()) {
            return Optional.empty();
        }
        Deque<Lease> taken = TAKEN_HERE.get();
        taken.removeIf(l -> !l.isHeld()); // released on another thread: forget them here
        taken.push(lease.get());
        return Optional.of(newLock(lease.get(), lockConfiguration, start, lockConfiguration.getLockAtLeastFor()));
    }

    /**
     * Returns the Turnstile options for a ShedLock configuration: {@code lockAtMostFor} as the TTL
     * (at least {@link LockOptions#MIN_TTL}) and {@code lockAtLeastFor} as the minimum hold, no
     * keep-alive (ShedLock's {@code lockAtMostFor} is a cap on the run, and its
     * {@code KeepAliveLockProvider} can wrap this provider). Override to hold locks differently.
     *
     * @param config ShedLock's configuration for the task
     * @return the options
     * @throws IllegalArgumentException if a duration is out of Turnstile's range
     */
    protected LockOptions lockOptions(LockConfiguration config) {
        if (config.getLockAtMostFor().isZero()) {
            // ShedLock's own providers store "locked until now": the lock is free again as it is
            // taken, so two instances can run the task at once. Refused rather than guessed at.
            throw new IllegalArgumentException("lockAtMostFor of lock '" + config.getName() + "' is 0: a lock that expires "
                    + "as it is taken excludes nothing; give the longest the task may run, e.g. "
                    + "@SchedulerLock(lockAtMostFor = \"10m\") or @EnableSchedulerLock(defaultLockAtMostFor = \"10m\")");
        }
        Duration atMost = atLeastMinTtl(config.getLockAtMostFor());
        Duration atLeast = config.getLockAtLeastFor();
        return LockOptions.builder()
                .lockAtMostFor(atMost)
                .lockAtLeastFor(atLeast.compareTo(atMost) > 0 ? atMost : atLeast)
                .build();
    }

    /**
     * Wraps a granted lease as ShedLock's lock. Override to return a subclass.
     *
     * @param lease the lease
     * @param config the configuration it was taken (or last extended) with
     * @param startNanos {@link System#nanoTime()} just before the acquire (or extend) call
     * @param holdFromAcquire the minimum hold to apply at unlock, counted from the acquire
     * @return the lock
     */
    protected TurnstileSimpleLock newLock(Lease lease, LockConfiguration config, long startNanos, Duration holdFromAcquire) {
        return new TurnstileSimpleLock(this, lease, config, startNanos, holdFromAcquire);
    }

    static Duration atLeastMinTtl(Duration d) {
        return d.compareTo(LockOptions.MIN_TTL) < 0 ? LockOptions.MIN_TTL : d;
    }

    /** The lock was released: it is no longer this thread's current lease. */
    static void forget(Lease lease) {
        TAKEN_HERE.get().remove(lease);
    }
}
