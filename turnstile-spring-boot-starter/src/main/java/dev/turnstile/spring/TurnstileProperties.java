package dev.turnstile.spring;

import dev.turnstile.job.StoreFailurePolicy;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code turnstile.*} properties of the Spring Boot starter.
 *
 * <p>Past 400 lines by a documented getter and setter per property: Spring Boot binds through them.
 */
@ConfigurationProperties("turnstile")
public class TurnstileProperties {

    /** Whether to auto-configure Turnstile at all. */
    private boolean enabled = true;

    /**
     * Readable holder identity stored with every lock this instance takes. Default: host name,
     * process id and a short random part, so two JVMs on one host never look alike.
     */
    private @Nullable String owner;

    private final Store store = new Store();

    private final Jdbc jdbc = new Jdbc();

    private final Redis redis = new Redis();

    private final Defaults defaults = new Defaults();

    private final Shutdown shutdown = new Shutdown();

    /** {@return whether auto-configuration is on} */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets whether auto-configuration is on.
     *
     * @param enabled whether auto-configuration is on
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** {@return the owner, or null for the default} */
    public @Nullable String getOwner() {
        return owner;
    }

    /**
     * Sets the owner, or null for the default.
     *
     * @param owner the owner, or null for the default
     */
    public void setOwner(@Nullable String owner) {
        this.owner = owner;
    }

    /** {@return the store settings} */
    public Store getStore() {
        return store;
    }

    /** {@return the settings of a store built over the application's DataSource} */
    public Jdbc getJdbc() {
        return jdbc;
    }

    /** {@return the settings of a store built over the application's Redis connection} */
    public Redis getRedis() {
        return redis;
    }

    /** {@return the application-wide defaults of {@link TurnstileLock} methods} */
    public Defaults getDefaults() {
        return defaults;
    }

    /** {@return the shutdown settings} */
    public Shutdown getShutdown() {
        return shutdown;
    }

    /**
     * Refuses a duration outside {@code [min, max]} at binding, so the application does not start
     * with it: a negative wait or hold would quietly mean "none", and a huge one overflows where it
     * is turned into nanoseconds.
     */
    static Duration inRange(String property, Duration value, Duration min, Duration max) {
        if (value == null || value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(property + " is " + (value == null ? "empty" : format(value))
                    + ": give " + format(min) + " to " + format(max) + " (e.g. 30s, 5m, 2h)");
        }
        return value;
    }

    /** Spring Boot's simple form where it is exact ({@code 366d}, {@code 10ms}), else ISO-8601. */
    private static String format(Duration d) {
        if (d.isZero()) {
            return "0s";
        }
        if (!d.isNegative() && d.getNano() % 1_000_000 == 0 && d.getSeconds() < 1_000_000_000_000L) {
            long ms = d.toMillis();
            if (ms % 86_400_000 == 0) {
                return ms / 86_400_000 + "d";
            }
            if (ms % 1000 == 0) {
                return ms / 1000 + "s";
            }
            return ms + "ms";
        }
        return d.toString();
    }

    /** Where the locks live. */
    public static class Store {

        /**
         * Store URL, such as jdbc:postgresql://db:5432/app?user=app or redis://cache:6379. When
         * set, it wins over the application's DataSource and Redis connection. Keep passwords in
         * an environment variable (TURNSTILE_STORE_URL).
         */
        private @Nullable String url;

        /**
         * Whether a store that cannot be used at start fails the start-up. Unset (the default): a
         * schema problem such as a missing lock table fails it, with the fix (it would skip every
         * locked run), while an unreachable store does not: the application starts, the health
         * indicator reports the store DOWN and locked methods skip their runs (logged at ERROR)
         * until it is back. {@code true}: both fail it. {@code false}: neither does.
         */
        private @Nullable Boolean failFast;

        /** {@return the URL, or null} */
        public @Nullable String getUrl() {
            return url;
        }

        /**
         * Sets the URL, or null for none.
         *
         * @param url the URL, or null for none
         */
        public void setUrl(@Nullable String url) {
            this.url = url;
        }

        /** {@return whether a store that cannot be used fails the start-up, or null for the default rule} */
        public @Nullable Boolean getFailFast() {
            return failFast;
        }

        /**
         * Sets whether a store that cannot be used fails the start-up (null: the default rule).
         *
         * @param failFast whether a store that cannot be used fails the start-up (null: the default rule)
         */
        public void setFailFast(@Nullable Boolean failFast) {
            this.failFast = failFast;
        }
    }

    /** A store over the application's own DataSource. */
    public static class Jdbc {

        /** Lock table name, optionally schema-qualified. */
        private String table = "turnstile_locks";

        /**
         * Whether to create the lock table on first use if it is missing. Off by default:
         * production schemas are usually migrated separately (see `turnstile schema`).
         */
        private boolean createTable;

        /**
         * On PostgreSQL, whether a forced release is told to the job holding the lock at once
         * (LISTEN/NOTIFY), which then stops, instead of at its next renewal. While a kept-alive job
         * runs, one connection of the pool listens. Unset: on when the pool is known to have three
         * connections or more (HikariCP's maximum pool size), off otherwise, so a pool of one is
         * never starved.
         */
        private @Nullable Boolean notifyForcedReleases;

        /** Turnstile's own Flyway migrations of the lock table. */
        private final Flyway flyway = new Flyway();

        /** {@return the Flyway settings} */
        public Flyway getFlyway() {
            return flyway;
        }

        /** {@return whether to listen for forced releases, or null for the pool-size rule} */
        public @Nullable Boolean getNotifyForcedReleases() {
            return notifyForcedReleases;
        }

        /**
         * Sets whether to listen for forced releases (null: the pool-size rule).
         *
         * @param notifyForcedReleases whether to listen for forced releases (null: the pool-size rule)
         */
        public void setNotifyForcedReleases(@Nullable Boolean notifyForcedReleases) {
            this.notifyForcedReleases = notifyForcedReleases;
        }

        /** {@return the table name} */
        public String getTable() {
            return table;
        }

        /**
         * Sets the table name.
         *
         * @param table the table name
         */
        public void setTable(String table) {
            this.table = table;
        }

        /** {@return whether to create the table} */
        public boolean isCreateTable() {
            return createTable;
        }

        /**
         * Sets whether to create the table.
         *
         * @param createTable whether to create the table
         */
        public void setCreateTable(boolean createTable) {
            this.createTable = createTable;
        }
    }

    /**
     * Turnstile's Flyway migrations of the lock table (in turnstile-jdbc's jar), run on the
     * application's DataSource before the store starts, with a schema-history table of their own,
     * so that they never mix with the application's own migrations.
     */
    public static class Flyway {

        /**
         * Whether to run Turnstile's Flyway migrations at start, before the store is used. Needs
         * Flyway on the class path (with flyway-database-postgresql or flyway-mysql on those
         * databases) and the table name turnstile_locks, optionally schema-qualified.
         */
        private boolean enabled;

        /** Schema-history table of Turnstile's migrations, apart from the application's own. */
        private String historyTable = "turnstile_schema_history";

        /** {@return whether to run the migrations} */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets whether to run the migrations.
         *
         * @param enabled whether to run the migrations
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** {@return the schema-history table} */
        public String getHistoryTable() {
            return historyTable;
        }

        /**
         * Sets the schema-history table.
         *
         * @param historyTable the schema-history table
         */
        public void setHistoryTable(String historyTable) {
            this.historyTable = historyTable;
        }
    }

    /** A store over the application's own Redis connection (Lettuce). */
    public static class Redis {

        /** Prefix of every key the store writes. */
        private String keyPrefix = "turnstile:";

        /** {@return the key prefix} */
        public String getKeyPrefix() {
            return keyPrefix;
        }

        /**
         * Sets the key prefix.
         *
         * @param keyPrefix the key prefix
         */
        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }
    }

    /** Defaults of every {@link TurnstileLock} method, below the method's and its class's own. */
    public static class Defaults {

        /** How long a lock is held at most if its method never returns (the lease's TTL). */
        private Duration lockAtMostFor = Duration.ofSeconds(30);

        /** How long a lock stays held at least, counted from the acquire. */
        private Duration lockAtLeastFor = Duration.ZERO;

        /** Whether to renew the lease every third of lock-at-most-for while the method runs. */
        private boolean keepAlive;

        /**
         * What a locked call does when the store cannot be reached: skip the run and log at ERROR,
         * or fail the call with StoreUnavailableException.
         */
        private StoreFailurePolicy onStoreUnavailable = StoreFailurePolicy.SKIP_AND_LOG;

        /** {@return the default TTL} */
        public Duration getLockAtMostFor() {
            return lockAtMostFor;
        }

        /**
         * Sets the default TTL.
         *
         * @param lockAtMostFor the default TTL, 10ms to 366d
         * @throws IllegalArgumentException outside that range, naming the property
         */
        public void setLockAtMostFor(Duration lockAtMostFor) {
            this.lockAtMostFor = inRange("turnstile.defaults.lock-at-most-for", lockAtMostFor, Duration.ofMillis(10),
                    Duration.ofDays(366));
        }

        /** {@return the default minimum hold} */
        public Duration getLockAtLeastFor() {
            return lockAtLeastFor;
        }

        /**
         * Sets the default minimum hold.
         *
         * @param lockAtLeastFor the default minimum hold, 0s to 366d
         * @throws IllegalArgumentException outside that range, naming the property
         */
        public void setLockAtLeastFor(Duration lockAtLeastFor) {
            this.lockAtLeastFor = inRange("turnstile.defaults.lock-at-least-for", lockAtLeastFor, Duration.ZERO,
                    Duration.ofDays(366));
        }

        /** {@return whether leases are kept alive} */
        public boolean isKeepAlive() {
            return keepAlive;
        }

        /**
         * Sets whether leases are kept alive.
         *
         * @param keepAlive whether leases are kept alive
         */
        public void setKeepAlive(boolean keepAlive) {
            this.keepAlive = keepAlive;
        }

        /** {@return the store-failure policy} */
        public StoreFailurePolicy getOnStoreUnavailable() {
            return onStoreUnavailable;
        }

        /**
         * Sets the store-failure policy.
         *
         * @param onStoreUnavailable the store-failure policy
         */
        public void setOnStoreUnavailable(StoreFailurePolicy onStoreUnavailable) {
            this.onStoreUnavailable = onStoreUnavailable;
        }
    }

    /** What happens on a graceful shutdown. */
    public static class Shutdown {

        /**
         * How long the shutdown waits for locked methods still running to return (they release
         * their own leases, honouring lock-at-least-for) before it releases whatever this instance
         * still holds.
         */
        private Duration awaitRunning = Duration.ofSeconds(10);

        /** {@return the wait} */
        public Duration getAwaitRunning() {
            return awaitRunning;
        }

        /**
         * Sets the wait.
         *
         * @param awaitRunning the wait, 0s to 1d
         * @throws IllegalArgumentException outside that range, naming the property (a negative wait
         *     would release running methods' leases at once, so another instance could start them)
         */
        public void setAwaitRunning(Duration awaitRunning) {
            this.awaitRunning = inRange("turnstile.shutdown.await-running", awaitRunning, Duration.ZERO, Duration.ofDays(1));
        }
    }
}
