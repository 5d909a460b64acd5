package dev.turnstile.micrometer;

import dev.turnstile.AcquireOutcome;
import dev.turnstile.LeaseLoss;
import dev.turnstile.Turnstile;
import dev.turnstile.TurnstileListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer meters for {@link Turnstile} clients: register it as a {@link TurnstileListener} on each
 * client ({@link Turnstile.Builder#listener}), bind it to a registry ({@link #bindTo}; Spring Boot
 * does this for every {@link MeterBinder} bean) and {@link #monitor} the clients whose held leases
 * the gauge counts.
 *
 * <pre>{@code
 * TurnstileMeters meters = TurnstileMeters.builder().build();
 * Turnstile turnstile = Turnstile.builder(store).listener(meters).build();
 * meters.monitor(turnstile).bindTo(registry);
 * }</pre>
 *
 * <p>Meters, named by Micrometer's conventions (dot-separated, lower case, times in the registry's
 * base unit, no {@code .total} suffix: each registry adds what its backend wants):
 * <table>
 *   <caption>meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>{@value #ACQUIRE}</td><td>timer</td><td>lock, outcome</td><td>each acquire call, waiting
 *       included; {@code outcome} is {@code acquired}, {@code busy} (a skipped run) or
 *       {@code store_failure}; its count per outcome is the acquired / busy / failed counter</td></tr>
 *   <tr><td>{@value #STORE_FAILURES}</td><td>counter</td><td>lock</td><td>every store call that failed
 *       as unavailable: acquires, renewals, extends, releases</td></tr>
 *   <tr><td>{@value #LEASES_LOST}</td><td>counter</td><td>lock</td><td>leases lost while held</td></tr>
 *   <tr><td>{@value #LEASES_HELD}</td><td>gauge</td><td>none</td><td>leases the monitored clients hold now</td></tr>
 *   <tr><td>{@value #LEASE_DURATION}</td><td>timer</td><td>lock</td><td>from acquire to release, per
 *       released lease</td></tr>
 * </table>
 *
 * <p><b>Cardinality.</b> Every distinct value of a tag is a time series in the backend. The
 * {@code lock} tag is right for fixed lock names (one per job); with names made per request or per
 * entity (a SpEL name with an order id, say), turn it off ({@link Builder#lockNameTag(boolean)}) or
 * map names to a few groups ({@link Builder#lockNameTag(UnaryOperator)}). Micrometer's
 * {@code MeterFilter.maximumAllowableTags("turnstile", "lock", 100, MeterFilter.deny())} is a safety
 * net on top.
 *
 * <p>Events that happen before the first {@link #bindTo} are not counted. Thread-safe.
 */
public final class TurnstileMeters implements TurnstileListener, MeterBinder {

    /** Timer of acquire calls, tagged {@code lock} and {@code outcome}. */
    public static final String ACQUIRE = "turnstile.acquire";
    /** Counter of store calls that failed as unavailable, tagged {@code lock}. */
    public static final String STORE_FAILURES = "turnstile.store.failures";
    /** Counter of leases lost while held, tagged {@code lock}. */
    public static final String LEASES_LOST = "turnstile.leases.lost";
    /** Gauge of the leases held now by the monitored clients. */
    public static final String LEASES_HELD = "turnstile.leases.held";
    /** Timer of how long released leases were held, tagged {@code lock}. */
    public static final String LEASE_DURATION = "turnstile.lease.duration";
    /** The tag that carries the lock name (or its mapped group). */
    public static final String LOCK_TAG = "lock";
    /** The tag that carries an acquire's outcome. */
    public static final String OUTCOME_TAG = "outcome";

    private final @Nullable UnaryOperator<String> lockTagValue; // null: no lock tag
    private final Tags tags;
    private final List<Bound> bound = new CopyOnWriteArrayList<>();
    private final List<Turnstile> monitored = new CopyOnWriteArrayList<>();

    private TurnstileMeters(Builder b) {
        this.lockTagValue = b.lockTagValue;
        this.tags = b.tags;
    }

    /**
     * Starts a builder: the lock name as the {@code lock} tag, no extra tags.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Counts the leases {@code turnstile} holds in the {@value #LEASES_HELD} gauge (its
     * {@link Turnstile#heldLeases()}, read when the gauge is read). Several clients may be monitored;
     * the gauge is their sum. Monitoring one twice counts it once.
     *
     * @param turnstile the client
     * @return this, to chain {@link #bindTo}
     * @throws IllegalArgumentException if {@code turnstile} is null
     */
    public TurnstileMeters monitor(Turnstile turnstile) {
        if (turnstile == null) {
            throw new IllegalArgumentException("turnstile must not be null: give the Turnstile whose held leases to count");
        }
        if (!monitored.contains(turnstile)) {
            monitored.add(turnstile);
        }
        return this;
    }

    /**
     * Registers the meters with {@code registry}; later events are recorded there. Binding to
     * several registries records to each. Binding one registry twice binds it once.
     *
     * @param registry the registry
     * @throws IllegalArgumentException if {@code registry} is null
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        if (registry == null) {
            throw new IllegalArgumentException("registry must not be null: give the MeterRegistry to register Turnstile's meters with");
        }
        synchronized (bound) {
            for (Bound b : bound) {
                if (b.registry == registry) {
                    return;
                }
            }
            Gauge.builder(LEASES_HELD, this, TurnstileMeters::leasesHeld)
                    .description("Leases the application's Turnstile clients hold now")
                    .baseUnit("leases")
                    .tags(tags)
                    .strongReference(true)
                    .register(registry);
            bound.add(new Bound(registry, tags));
        }
    }

    /** Sum over the monitored clients; a closed client holds nothing. */
    private double leasesHeld() {
        int n = 0;
        for (Turnstile t : monitored) {
            n += t.heldLeases().size();
        }
        return n;
    }

    @Override
    public void onAcquire(String name, AcquireOutcome outcome, Duration latency) {
        Tags t = lockTags(name).and(OUTCOME_TAG, outcome.name().toLowerCase(Locale.ROOT));
        for (Bound b : bound) {
            b.acquire.withTags(t).record(latency);
        }
    }

    @Override
    public void onRelease(String name, long fence, Duration heldFor) {
        Tags t = lockTags(name);
        for (Bound b : bound) {
            b.leaseDuration.withTags(t).record(heldFor);
        }
    }

    @Override
    public void onLost(LeaseLoss loss) {
        Tags t = lockTags(loss.name());
        for (Bound b : bound) {
            b.lost.withTags(t).increment();
        }
    }

    @Override
    public void onStoreFailure(String name, RuntimeException error) {
        Tags t = lockTags(name);
        for (Bound b : bound) {
            b.storeFailures.withTags(t).increment();
        }
    }

    private Tags lockTags(String name) {
        if (lockTagValue == null) {
            return Tags.empty();
        }
        // A mapper that gives null or blank would make an invalid tag: fall back to one bucket.
        String value = lockTagValue.apply(name);
        return Tags.of(Tag.of(LOCK_TAG, value == null || value.isBlank() ? "other" : value));
    }

    /** The meter providers of one registry: looked up per event by tags, created once each. */
    private static final class Bound {
        final MeterRegistry registry;
        final Meter.MeterProvider<Timer> acquire;
        final Meter.MeterProvider<Timer> leaseDuration;
        final Meter.MeterProvider<Counter> lost;
        final Meter.MeterProvider<Counter> storeFailures;

        Bound(MeterRegistry registry, Tags tags) {
            this.registry = registry;
            this.acquire = Timer.builder(ACQUIRE)
                    .description("Acquire calls of Turnstile clients, waiting included, by outcome (acquired, busy, store_failure)")
                    .tags(tags)
                    .withRegistry(registry);
            this.leaseDuration = Timer.builder(LEASE_DURATION)
                    .description("How long released leases were held, from the acquire call to the release")
                    .tags(tags)
                    .withRegistry(registry);
            this.lost = Counter.builder(LEASES_LOST)
                    .description("Leases lost while held (renewal refused, local deadline passed, force-released)")
                    .baseUnit("leases")
                    .tags(tags)
                    .withRegistry(registry);
            this.storeFailures = Counter.builder(STORE_FAILURES)
                    .description("Store calls (acquire, renewal, extend, release) that failed as unavailable")
                    .baseUnit("failures")
                    .tags(tags)
                    .withRegistry(registry);
        }
    }

    /** Builds {@link TurnstileMeters}. Not thread-safe; the built object is. */
    public static final class Builder {
        private @Nullable UnaryOperator<String> lockTagValue = UnaryOperator.identity();
        private Tags tags = Tags.empty();

        private Builder() {}

        /**
         * Whether meters carry the lock name as the {@value #LOCK_TAG} tag (default {@code true}).
         * Turn it off when lock names are dynamic (per entity or request): each name would be a
         * time series of its own.
         *
         * @param enabled {@code false} to leave the tag out of every meter
         * @return this builder
         */
        public Builder lockNameTag(boolean enabled) {
            this.lockTagValue = enabled ? UnaryOperator.identity() : null;
            return this;
        }

        /**
         * Tags meters with a value computed from the lock name, to group dynamic names into a few
         * values (e.g. {@code name -> name.replaceAll("-\\d+$", "")}). A mapper that returns null
         * or a blank value tags {@code other}.
         *
         * @param mapper from lock name to tag value
         * @return this builder
         * @throws IllegalArgumentException if {@code mapper} is null
         */
        public Builder lockNameTag(UnaryOperator<String> mapper) {
            if (mapper == null) {
                throw new IllegalArgumentException(
                        "mapper must not be null: give a function from lock name to tag value, or lockNameTag(false) for no tag");
            }
            this.lockTagValue = mapper;
            return this;
        }

        /**
         * Adds tags to every meter (e.g. the store: {@code Tags.of("store", "orders-db")}).
         *
         * @param extra the tags
         * @return this builder
         * @throws IllegalArgumentException if {@code extra} is null or uses the key {@value #LOCK_TAG}
         *     or {@value #OUTCOME_TAG}
         */
        public Builder tags(Iterable<Tag> extra) {
            if (extra == null) {
                throw new IllegalArgumentException("tags must not be null: give Tags.empty() for none");
            }
            for (Tag t : extra) {
                if (Objects.equals(t.getKey(), LOCK_TAG) || Objects.equals(t.getKey(), OUTCOME_TAG)) {
                    throw new IllegalArgumentException("tag key '" + t.getKey()
                            + "' is Turnstile's own: give your extra tags other keys");
                }
            }
            this.tags = this.tags.and(extra);
            return this;
        }

        /**
         * Builds the meters.
         *
         * @return the meters, bound to no registry yet
         */
        public TurnstileMeters build() {
            return new TurnstileMeters(this);
        }
    }
}
